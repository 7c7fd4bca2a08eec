"""Issue 11, defects 2-5 on the namespace lab: one owner per campaign (two resumes, two
services on different machines), host leases for CLI campaigns, and a resume that refuses an
inventory that changed what a sample means. Each test fails without ownership and leases."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import SMALL_KNOBS, fixed_runs_design

from nimo.records import RunStatus
from nimo.store import open_store

pytestmark = [pytest.mark.lab, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
KNOBS = SMALL_KNOBS
STALE_S = 6.0  # generous: on a loaded 2-core machine a heartbeat thread can stall


def _nimo(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "NIMO_HEARTBEAT_S": "0.3", "NIMO_STALE_S": str(STALE_S), **extra}


def _done_runs(db: Path, name: str | None = None) -> int:
    if not db.exists():
        return 0
    q = "SELECT count(*) FROM nimo_runs r JOIN nimo_campaigns c ON c.id = r.campaign_id " \
        "WHERE r.status = 'done'" + (" AND c.name = ?" if name else "")
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute(q, (name,) if name else ()).fetchone()[0]
    except sqlite3.Error:
        return 0


def _wait_runs(db: Path, n: int, proc: subprocess.Popen, name: str | None = None,
               timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while _done_runs(db, name) < n:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"fewer than {n} runs done in {timeout_s} s"
        time.sleep(0.05)


def _setup(lab, tmp_path: Path, max_runs: int) -> tuple[Path, list[dict]]:
    design = tmp_path / "design.yaml"
    design.write_text(fixed_runs_design("ownership", max_runs))
    return design, yaml.safe_load(Path(lab.inventory_path).read_text())["hosts"]


def _inventory(lab, tmp_path: Path, name: str, hosts: list[dict], compute: str,
               size_mb: float = 4) -> str:
    from conftest import lab_inventory

    return lab_inventory(lab, tmp_path, "checksum", size_mb, dataset=f"checksum-{name}",
                         name=name, knobs=KNOBS,
                         hosts=[h for h in hosts if h["name"] in ("storage1", compute)])


def _run(inventory: str, design: Path, url: str, name: str) -> list[str]:
    return _nimo("campaign", "run", inventory, "--design", str(design), "--store", url,
                 "--name", name, "--quiet", "--skip-doctor")


def _resume(url: str, name: str, *extra: str) -> list[str]:
    return _nimo("campaign", "resume", name, "--store", url, "--quiet", "--skip-doctor", *extra)


def _killed_after_first_run(cmd: list[str], db: Path, name: str) -> None:
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    _wait_runs(db, 1, proc, name)
    time.sleep(0.4)  # into the next run
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _one_sample_per_run(store, name: str) -> list:
    runs = store.runs(name)
    assert runs and all(r.status is RunStatus.DONE for r in runs), [
        (r.run, r.status.value, r.reason) for r in runs]
    assert [run for run, _ in store.samples(name)] == [r.run for r in runs]
    return runs


def test_two_resumes_of_a_crashed_campaign_one_runs(lab, tmp_path: Path) -> None:
    """Defect 2: two `nimo campaign resume NAME` at once: one runs it, the other exits 5 with
    one line naming the owner; no run is executed twice."""
    design, hosts = _setup(lab, tmp_path, max_runs=10)
    inv = _inventory(lab, tmp_path, "twin", hosts, "compute1")
    db = tmp_path / "twin.db"
    url = f"sqlite:///{db}"
    _killed_after_first_run(_run(inv, design, url, "twin"), db, "twin")
    with open_store(url) as store:
        before = {r.run: r.sample.T for r in store.runs("twin") if r.status is RunStatus.DONE}
    procs = [subprocess.Popen(_resume(url, "twin"), env=_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=600), p.communicate()[1]) for p in procs]
    assert sorted(code for code, _ in results) == [0, 5], results
    loser = next(err for code, err in results if code == 5).strip()
    assert "campaign 'twin' is run by another process: host" in loser and " pid " in loser
    assert len(loser.splitlines()) == 1, loser
    with open_store(url) as store:
        runs = _one_sample_per_run(store, "twin")
        assert store.campaign("twin").status == "done"
        assert {r.run: r.sample.T for r in runs if r.run in before} == before
        assert all(r.attempts == 1 for r in runs if r.run in before)
        # runs queued by the killed process count one attempt more; none ran twice after
        assert max(r.attempts for r in runs) <= 2


def _other_machine(name: str, cmd: list[str]) -> list[str]:
    """``cmd`` as on another machine: its own host name and pid namespace."""
    return ["unshare", "--uts", "--pid", "--fork", "--kill-child=SIGKILL", "sh", "-c",
            f'hostname {name} && exec "$@"', "sh", *cmd]


def test_two_services_on_two_machines_never_both_run_a_campaign(lab, tmp_path: Path) -> None:
    """Defect 3: a second `nimo serve` on another machine (host name, pid namespace) leaves
    the first one's live campaign alone; once the first is SIGKILLed, its heartbeat goes stale
    and the second takes over: every run once, leases never held by both."""
    design, hosts = _setup(lab, tmp_path, max_runs=14)
    inv = _inventory(lab, tmp_path, "served", hosts, "compute2")
    db = tmp_path / "served.db"
    url = f"sqlite:///{db}"
    subprocess.run(_nimo("campaign", "submit", "served", "--inventory", inv, "--design",
                         str(design), "--store", url), check=True, env=_env(),
                   capture_output=True)
    serve = _nimo("serve", "--store", url, "--poll", "0.2", "--until-idle")
    first = subprocess.Popen(serve, env=_env(NIMO_HOSTNAME="machine-a"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_runs(db, 1, first)
    second = subprocess.Popen(_other_machine("machine-b", serve),
                              env=_env(NIMO_HOSTNAME="machine-b"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    time.sleep(2 * STALE_S)  # the first's leases are older than the stale time: still its own
    with open_store(url) as store:
        assert store.campaign("served").status == "running"
        owner = store.campaign_owner("served")
        assert owner is not None and owner.host == "machine-a"
        assert {lg.owner.split(":")[0] for lg in store.lease_log()} == {"machine-a"}
    assert first.poll() is None and second.poll() is None
    before = _done_runs(db)
    first.send_signal(signal.SIGKILL)
    first.wait()
    _, err = second.communicate(timeout=600)
    assert second.returncode == 0, err
    assert "requeued served" in err
    with open_store(url) as store:
        runs = _one_sample_per_run(store, "served")
        assert store.campaign("served").status == "done"
        assert len(runs) > before and max(r.attempts for r in runs) <= 2
        log = sorted(store.lease_log(), key=lambda lg: lg.acquired_at)
        a = [lg for lg in log if lg.owner.startswith("machine-a:")]
        b = [lg for lg in log if lg.owner.startswith("machine-b:")]
        assert a and b and store.leases() == []
        assert max(lg.released_at for lg in a) <= min(lg.acquired_at for lg in b)


def test_a_cli_campaign_leases_its_hosts(lab, tmp_path: Path, leftovers) -> None:
    """Defect 4: while `nimo campaign run` runs on compute1, a new campaign on the same hosts
    and the resume of a crashed one (whose clean-up would destroy the running campaign's
    in-flight run) both exit 5 naming it; the running campaign finishes untouched."""
    design, hosts = _setup(lab, tmp_path, max_runs=10)
    db = tmp_path / "cli.db"
    url = f"sqlite:///{db}"
    crashed = _inventory(lab, tmp_path, "crashed", hosts, "compute1")
    _killed_after_first_run(_run(crashed, design, url, "crashed"), db, "crashed")
    subprocess.run(_nimo("clean", crashed), env=_env(), check=True, capture_output=True)
    busy = _inventory(lab, tmp_path, "busy", hosts, "compute1")
    proc = subprocess.Popen(_run(busy, design, url, "busy"), env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_runs(db, 2, proc, "busy")
    other = _inventory(lab, tmp_path, "other", hosts, "compute1")
    for cmd in (_resume(url, "crashed"), _run(other, design, url, "other")):
        out = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
        assert out.returncode == 5, out.stderr
        assert "is leased to campaign 'busy'" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert proc.poll() is None, "the running campaign ended before the test was done"
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    with open_store(url) as store:
        runs = _one_sample_per_run(store, "busy")
        assert all(r.attempts == 1 for r in runs)
        assert "other" not in [c.name for c in store.campaigns()]
        held = {lg.host for lg in store.lease_log() if lg.campaign == "busy"}
        assert held == {"storage1", "compute1"}
        assert {r.host for r in runs} == {"compute1"}
    out = subprocess.run(_resume(url, "crashed"), env=_env(), capture_output=True, text=True,
                         timeout=600)  # the hosts are free again: it resumes and cleans
    assert out.returncode == 0, out.stderr
    for host in ("storage1", "compute1"):
        with lab.connect(host) as conn:
            left = {k: v for k, v in leftovers(conn).items() if v}
            assert not left, f"{host}: {left}"


def test_resume_refuses_an_inventory_whose_dataset_changed(lab, tmp_path: Path,
                                                          assert_clean) -> None:
    """Defect 5: the dataset went from 4 to 2 MB between a crash and its resume: the resume
    refuses with one line naming the dataset; `--new NAME` starts a fresh campaign; what the
    killed campaign left on the hosts goes with `nimo clean --campaign`."""
    design, hosts = _setup(lab, tmp_path, max_runs=10)
    db = tmp_path / "edit.db"
    url = f"sqlite:///{db}"
    inv = _inventory(lab, tmp_path, "edited", hosts, "compute2", size_mb=4)
    _killed_after_first_run(_run(inv, design, url, "edited"), db, "edited")
    assert _inventory(lab, tmp_path, "edited", hosts, "compute2", size_mb=2) == inv
    out = subprocess.run(_resume(url, "edited"), env=_env(), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip()
    assert len(line.splitlines()) == 1 and "the dataset changed since campaign 'edited'" in line
    with open_store(url) as store:
        assert _done_runs(db, "edited") == 1 and store.campaign_owner("edited") is None
    out = subprocess.run(_resume(url, "edited", "--new", "edited-2mb"), env=_env(),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    with open_store(url) as store:
        assert store.campaign("edited-2mb").seed == store.campaign("edited").seed
        _one_sample_per_run(store, "edited-2mb")
    out = subprocess.run(_nimo("clean", inv, "--campaign", "edited"), env=_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for host, ifaces in (("storage1", ("data0", "data1")), ("compute2", ("data0",))):
        with lab.connect(host) as conn:
            for iface in ifaces:
                assert_clean(conn, iface)
