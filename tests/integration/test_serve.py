"""``nimo serve`` as a real process: queued replay campaigns bound to named hosts never share
a host, and a service killed with SIGKILL is restarted and finishes them exactly."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL_KNOBS, fixed_runs_design

from nimo.model import CostModel
from nimo.records import RunStatus
from nimo.store import open_store
from workbench.synthetic import write_all

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
CAMPAIGNS = {  # name: (csv, hosts, seed)
    "left": ("cpu_bound.csv", "h1,h2", 1),
    "right": ("io_bound.csv", "h2,h3", 2),
    "solo": ("saturating.csv", "h1", 3),
}


def _nimo(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _done_runs(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT count(*) FROM nimo_runs WHERE status = 'done'").fetchone()[0]
    except sqlite3.Error:
        return 0


def _overlaps(log) -> list[tuple[str, str, str]]:
    bad = []
    for i, a in enumerate(log):
        for b in log[i + 1:]:
            if a.host == b.host and a.campaign != b.campaign:
                a_end, b_end = a.released_at or float("inf"), b.released_at or float("inf")
                if a.acquired_at < b_end and b.acquired_at < a_end:
                    bad.append((a.host, a.campaign, b.campaign))
    return bad


def test_serve_shares_no_host_and_survives_sigkill(tmp_path: Path) -> None:
    write_all(tmp_path)
    db = tmp_path / "serve.db"
    url = f"sqlite:///{db}"
    for name, (csv, hosts, seed) in CAMPAIGNS.items():
        subprocess.run(_nimo("campaign", "submit", name, "--replay", str(tmp_path / csv),
                             "--hosts", hosts, "--seed", str(seed), "--external-test", "10",
                             "--design", "paper-default", "--store", url),
                       check=True, env=_env(), capture_output=True)

    serve = _nimo("serve", "--store", url, "--poll", "0.2", "--until-idle")
    first = subprocess.Popen(serve, env=_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _done_runs(db) < 15:
        assert first.poll() is None, first.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    with open_store(url) as store:
        assert store.leases(), "the killed service held no host"
        statuses = {c.name: c.status for c in store.campaigns()}
        assert "running" in statuses.values()

    second = subprocess.run(serve, env=_env(), capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert "requeued" in second.stderr

    with open_store(url) as store:
        assert {c.name: c.status for c in store.campaigns()} == dict.fromkeys(CAMPAIGNS, "done")
        assert store.leases() == []
        log = store.lease_log()
        assert _overlaps(log) == []
        assert {lg.host for lg in log} == {"h1", "h2", "h3"}
        got = {n: (store.runs(n), store.model(n).model) for n in CAMPAIGNS}

    for name, (csv, _, seed) in CAMPAIGNS.items():  # same as an uninterrupted campaign
        ref_db = tmp_path / f"ref-{name}.db"
        subprocess.run(_nimo("replay", str(tmp_path / csv), "--seed", str(seed),
                             "--external-test", "10", "--design", "paper-default",
                             "--store", f"sqlite:///{ref_db}", "--name", name, "--quiet"),
                       check=True, env=_env(), capture_output=True)
        with open_store(f"sqlite:///{ref_db}") as ref:
            ref_runs, ref_model = ref.runs(name), ref.model(name).model
        runs, model = got[name]
        assert [(r.run, dict(r.assignment), r.sample.T) for r in runs] == [
            (r.run, dict(r.assignment), r.sample.T) for r in ref_runs]
        assert all(r.status is RunStatus.DONE for r in runs)
        m, rm = CostModel.from_dict(model), CostModel.from_dict(ref_model)
        X = np.array([[r.assignment[n] for n in rm.names] for r in ref_runs])
        np.testing.assert_allclose(m.predict_many(X), rm.predict_many(X), rtol=1e-9)


LIVE_DESIGN = fixed_runs_design("serve-live", 9)
LIVE_KNOBS = SMALL_KNOBS


@pytest.mark.lab
def test_serve_runs_two_live_campaigns_on_three_lab_hosts(tmp_path_factory, tmp_path) -> None:
    """Two live campaigns queued for `nimo serve` on a lab of three hosts (storage1 shared,
    compute1 and compute2 one each): no host is ever leased to both at once; the service is
    SIGKILLed mid-campaign, restarted, and finishes both with one sample per run and nothing
    of the emulation left on any host."""
    import yaml
    from conftest import lab_inventory, leftovers, running_lab

    with running_lab(tmp_path_factory, hosts=3) as lab:
        hosts = yaml.safe_load(Path(lab.inventory_path).read_text())["hosts"]
        design = tmp_path / "design.yaml"
        design.write_text(LIVE_DESIGN)
        url = f"sqlite:///{tmp_path / 'serve-live.db'}"
        for name, compute in (("east", "compute1"), ("west", "compute2")):
            path = lab_inventory(
                lab, tmp_path, "checksum", 4, dataset=f"checksum-{name}", name=name,
                knobs=LIVE_KNOBS, hosts=[h for h in hosts if h["name"] in ("storage1", compute)])
            subprocess.run(_nimo("campaign", "submit", name, "--inventory", path,
                                 "--design", str(design), "--store", url),
                           check=True, env=_env(), capture_output=True)

        serve = _nimo("serve", "--store", url, "--poll", "0.2", "--until-idle")
        first = subprocess.Popen(serve, env=_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        db = tmp_path / "serve-live.db"
        deadline = time.monotonic() + 300
        while _done_runs(db) < 4:
            assert first.poll() is None, first.communicate()[1]
            assert time.monotonic() < deadline, "no live run finished under nimo serve"
            time.sleep(0.05)
        time.sleep(0.7)  # into the next run's setup or run
        first.send_signal(signal.SIGKILL)
        first.wait()
        with open_store(url) as store:
            kept = {(c.name, r.run): r.sample.T for c in store.campaigns()
                    for r in store.runs(c.name) if r.status is RunStatus.DONE}
        assert kept

        second = subprocess.run(serve, env=_env(), capture_output=True, text=True, timeout=900)
        assert second.returncode == 0, second.stderr
        assert "requeued" in second.stderr

        with open_store(url) as store:
            statuses = {c.name: (c.status, c.stopped_because) for c in store.campaigns()}
            assert {n: st for n, (st, _) in statuses.items()} == {"east": "done",
                                                                  "west": "done"}, statuses
            assert store.leases() == []
            log = store.lease_log()
            assert _overlaps(log) == []
            assert {lg.host for lg in log} == {"storage1", "compute1", "compute2"}
            for name in ("east", "west"):
                runs = store.runs(name)
                assert runs and all(r.status is RunStatus.DONE for r in runs), [
                    (r.run, r.status.value, r.reason) for r in runs]
                assert [run for run, _ in store.samples(name)] == [r.run for r in runs]
                for r in runs:  # picked up where it was: finished runs kept as they were
                    if (name, r.run) in kept:
                        assert r.sample.T == kept[name, r.run] and r.attempts == 1
                want = {"east": "compute1", "west": "compute2"}[name]
                assert {r.host for r in runs} == {want}
        for host in lab.hosts:
            with lab.connect(host.name) as conn:
                left = {k: v for k, v in leftovers(conn).items() if v}
                assert not left, f"{host.name}: {left}"
