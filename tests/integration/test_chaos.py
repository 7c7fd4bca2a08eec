"""Issue 11, acceptance 2: three live campaigns (one from the CLI, two queued for two
`nimo serve` processes with different host names) on one store and one lab of three compute
hosts (the storage host marked shareable). 30 random SIGKILL or SIGTERM of any of the three
processes (each restarted) and 5 flaps of a compute host's data link. At the end every
campaign is done, no run was executed twice, every sample's host was leased to its campaign
for the whole run, no compute host was ever leased to two campaigns at once, and nothing of
the emulation remains on any host."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import SMALL_KNOBS, campaign_in_db, fixed_runs_design

from nimo.records import RunStatus
from nimo.store import open_store

pytestmark = [pytest.mark.lab, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
KILLS, FLAPS = 30, 5
DESIGN = fixed_runs_design("chaos", 20)
KNOBS = SMALL_KNOBS
CAMPAIGNS = {"cli": ["compute1"], "east": ["compute2"], "west": ["compute1", "compute3"]}
SHARED = "storage1"
# SIGTERM before the handler is installed (interpreter start-up, imports: nothing started yet)
# ends the process by the signal itself
OK_EXITS = {0, 5, -signal.SIGKILL, -signal.SIGTERM, 128 + signal.SIGTERM}


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "NIMO_HEARTBEAT_S": "0.5", "NIMO_STALE_S": "10", **extra}


def _nimo(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


class Actor:
    """One restartable process: the CLI campaign or a service; stderr appended to a file."""

    def __init__(self, name: str, command, log: Path, env: dict[str, str]) -> None:
        self.name, self.command, self.log, self.env = name, command, log, env
        self.proc: subprocess.Popen | None = None
        self.finished = False
        self.exits: list[int] = []

    def start(self) -> None:
        with self.log.open("a") as err:
            self.proc = subprocess.Popen(self.command(), env=self.env, stdout=subprocess.DEVNULL,
                                         stderr=err, text=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def reap(self) -> None:
        """Record an exit; restart unless it finished (exit 0)."""
        if self.proc is None or self.proc.poll() is None or self.finished:
            return
        code = self.proc.returncode
        self.exits.append(code)
        assert code in OK_EXITS, f"{self.name} exited {code}: {self.log.read_text()[-3000:]}"
        if code == 0:
            self.finished = True
            return
        if code == 5:
            time.sleep(0.5)  # busy: its hosts are leased to another campaign; retry
        self.start()

    def kill(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=120)  # SIGTERM: runs in flight end, then teardown
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGUSR1)  # its threads' stacks, into its log
            time.sleep(1)
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.name} did not stop within 120 s of signal {sig}: "
                                 f"{self.log.read_text()[-6000:]}") from None


def _flap(lab, rng: np.random.Generator) -> None:
    host = lab.host(f"compute{rng.integers(1, 4)}")
    subprocess.run(["ip", "-n", host.netns, "link", "set", host.data_iface, "down"], check=True)
    time.sleep(rng.uniform(0.5, 2.0))
    subprocess.run(["ip", "-n", host.netns, "link", "set", host.data_iface, "up"], check=True)


def _snapshot(url: str, seen: dict[tuple[str, int], tuple[float, float | None]]) -> None:
    """Finished runs never change nor run again: remember each one's T and start time."""
    with open_store(url) as store:
        for c in store.campaigns():
            for r in store.runs(c.name):
                if r.status is RunStatus.DONE:
                    key = (c.name, r.run)
                    assert seen.setdefault(key, (r.sample.T, r.started_at)) == (
                        r.sample.T, r.started_at), f"run {key} changed: executed twice"


def _setup(lab, tmp_path: Path) -> tuple[str, Path, dict[str, str]]:
    from conftest import lab_inventory

    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    for h in doc["hosts"]:
        h["shareable"] = h["name"] == SHARED
    design = tmp_path / "design.yaml"
    design.write_text(DESIGN)
    policies = {"on_failure": "continue", "max_failures": 100, "retries": 2}
    inventories = {name: lab_inventory(
        lab, tmp_path, "checksum", 4, dataset=f"checksum-{name}", name=name, knobs=KNOBS,
        policies=policies, hosts=[h for h in doc["hosts"] if h["name"] in (SHARED, *hosts)])
        for name, hosts in CAMPAIGNS.items()}
    url = f"sqlite:///{tmp_path / 'chaos.db'}"
    for name in ("east", "west"):
        subprocess.run(_nimo("campaign", "submit", name, "--inventory", inventories[name],
                             "--design", str(design), "--store", url),
                       check=True, env=_env(), capture_output=True)
    return url, design, inventories


def _actors(url: str, design: Path, inventory: str, tmp_path: Path) -> list[Actor]:
    db = tmp_path / "chaos.db"

    def cli() -> list[str]:
        if campaign_in_db(db, "cli"):
            return _nimo("campaign", "resume", "cli", "--store", url, "--quiet", "--skip-doctor")
        return _nimo("campaign", "run", inventory, "--design", str(design), "--store", url,
                     "--name", "cli", "--quiet", "--skip-doctor")

    def serve() -> list[str]:
        return _nimo("serve", "--store", url, "--poll", "0.3", "--until-idle")

    return [Actor("cli", cli, tmp_path / "cli.log", _env(NIMO_HOSTNAME="laptop")),
            *(Actor(n, serve, tmp_path / f"{n}.log", _env(NIMO_HOSTNAME=n))
              for n in ("alpha", "beta"))]


def _chaos(lab, actors: list[Actor], url: str, rng: np.random.Generator) -> dict:
    events = ["kill"] * KILLS + ["flap"] * FLAPS
    rng.shuffle(events)
    seen: dict = {}
    kills = 0
    for event in events:
        deadline = time.monotonic() + rng.uniform(0.5, 2.5)
        while time.monotonic() < deadline:
            for a in actors:
                a.reap()
            time.sleep(0.05)
        if event == "flap":
            _flap(lab, rng)
            continue
        live = [a for a in actors if a.alive()]
        assert live, "every process finished before the 30 kills: give them more work"
        victim = live[rng.integers(len(live))]
        victim.kill(signal.SIGKILL if rng.random() < 0.6 else signal.SIGTERM)
        kills += 1
        _snapshot(url, seen)
    assert kills == KILLS
    return seen


def _finish(actors: list[Actor], timeout_s: float = 400) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(a.finished for a in actors):
        assert time.monotonic() < deadline, {a.name: a.exits for a in actors}
        for a in actors:
            a.reap()
        time.sleep(0.1)


def _overlaps(log) -> list[tuple[str, str, str]]:
    bad = []
    for i, a in enumerate(log):
        for b in log[i + 1:]:
            if a.host == b.host != SHARED and a.campaign != b.campaign \
                    and a.acquired_at < (b.released_at or float("inf")) \
                    and b.acquired_at < (a.released_at or float("inf")):
                bad.append((a.host, a.campaign, b.campaign))
    return bad


def _check_store(url: str, seen: dict) -> None:
    with open_store(url) as store:
        assert {c.name: c.status.value for c in store.campaigns()} == dict.fromkeys(
            CAMPAIGNS, "done")
        assert store.leases() == []
        log = store.lease_log()
        assert _overlaps(log) == []
        for name, hosts in CAMPAIGNS.items():
            runs = store.runs(name)
            done = [r for r in runs if r.status is RunStatus.DONE]
            assert done, f"{name}: no run done"
            assert [run for run, _ in store.samples(name)] == [r.run for r in done]
            for r in done:
                assert seen.get((name, r.run), (r.sample.T, r.started_at)) == (
                    r.sample.T, r.started_at), f"{name} run {r.run} executed twice"
                assert r.host in hosts, (name, r.run, r.host)
                assert any(lg.host == r.host and lg.campaign == name
                           and lg.acquired_at <= r.started_at
                           and (lg.released_at or float("inf")) >= r.ended_at
                           for lg in log), f"{name} run {r.run} ran on {r.host} unleased"


def test_chaos_three_campaigns_two_services_30_kills_5_flaps(tmp_path_factory, tmp_path,
                                                             leftovers) -> None:
    from conftest import running_lab

    rng = np.random.default_rng(1111)
    with running_lab(tmp_path_factory, hosts=4) as lab:
        url, design, inventories = _setup(lab, tmp_path)
        actors = _actors(url, design, inventories["cli"], tmp_path)
        for a in actors:
            a.start()
        try:
            seen = _chaos(lab, actors, url, rng)
            _finish(actors)
        finally:
            for a in actors:
                if a.alive():
                    a.proc.kill()
                    a.proc.wait()
        logs = "".join(a.log.read_text() for a in actors)
        assert "already finished" not in logs and "Traceback" not in logs, logs[-4000:]
        _check_store(url, seen)
        for host in lab.hosts:
            with lab.connect(host.name) as conn:
                left = {k: v for k, v in leftovers(conn).items() if v}
                assert not left, f"{host.name}: {left}"
