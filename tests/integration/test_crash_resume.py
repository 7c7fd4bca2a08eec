"""A replay campaign killed with SIGKILL at random points, resumed each time, ends exactly as
an uninterrupted campaign with the same seed: no sample lost or duplicated, same model."""

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
from conftest import campaign_in_db, fixed_runs_design

from nimo.model import CostModel
from nimo.records import RunStatus
from nimo.store import open_store

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KILLS = 20
DESIGN = fixed_runs_design("crash-test", 90)


def _nimo(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synthetic")
    subprocess.run(_nimo_synthetic(out), check=True, env=_env(), capture_output=True)
    (out / "design.yaml").write_text(DESIGN)
    return out


def _nimo_synthetic(out: Path) -> list[str]:
    return [sys.executable, "-m", "workbench.synthetic", str(out)]


def _replay(data: Path, db: Path, name: str) -> list[str]:
    return _nimo("replay", str(data / "saturating.csv"), "--design", str(data / "design.yaml"),
                 "--external-test", "10", "--seed", "3", "--store", f"sqlite:///{db}",
                 "--name", name, "--quiet")


def _done_runs(db: Path) -> int:
    """Finished runs, read straight from the SQLite file (0 before the tables exist). Not
    read-only: after a SIGKILL, a reader may have to roll back the hot journal."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute(
                "SELECT count(*) FROM nimo_runs WHERE status IN ('done', 'failed')"
            ).fetchone()[0]
    except sqlite3.Error:
        return 0


def _kill_at_random_point(proc: subprocess.Popen, db: Path, rng: np.random.Generator) -> bool:
    """SIGKILL ``proc`` at a random point: usually just after its next finished run plus a
    random delay (mid-run, mid-commit, mid-fit), sometimes at a random time since start
    (during start-up or resume). False if it finished first."""
    start_runs = _done_runs(db)
    if rng.random() < 0.25:
        deadline = time.monotonic() + rng.uniform(0.0, 3.0)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            time.sleep(0.005)
    else:
        while _done_runs(db) <= start_runs:
            if proc.poll() is not None:
                return False
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.08))
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def test_sigkill_and_resume_loses_and_repeats_nothing(data: Path, tmp_path: Path) -> None:
    ref_db, db = tmp_path / "ref.db", tmp_path / "crash.db"
    subprocess.run(_replay(data, ref_db, "ref"), check=True, env=_env(), capture_output=True)

    rng = np.random.default_rng(20061)
    kills, launches, finished = 0, 0, False
    while not finished:
        assert launches < 200, "the campaign never finished"
        if campaign_in_db(db, "crash"):
            cmd = _nimo("campaign", "resume", "crash", "--store", f"sqlite:///{db}", "--quiet")
        else:
            cmd = _replay(data, db, "crash")
        proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        launches += 1
        if kills < KILLS and _kill_at_random_point(proc, db, rng):
            kills += 1
            continue
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        finished = True
    assert kills >= KILLS

    with open_store(f"sqlite:///{ref_db}") as ref_store, open_store(f"sqlite:///{db}") as store:
        ref_runs, runs = ref_store.runs("ref"), store.runs("crash")
        assert store.campaign("crash").status == "done"
        assert [r.run for r in runs] == list(range(1, len(ref_runs) + 1))
        assert all(r.status is RunStatus.DONE for r in runs)
        samples, ref_samples = store.samples("crash"), ref_store.samples("ref")
        assert len(samples) == len({run for run, _ in samples}) == len(ref_samples)
        for (run, s), (ref_run, r) in zip(samples, ref_samples, strict=True):
            assert run == ref_run and dict(s.assignment) == dict(r.assignment) and s.T == r.T
        assert [i.to_dict() for i in store.iterations("crash")] == [
            i.to_dict() for i in ref_store.iterations("ref")]
        model = CostModel.from_dict(store.model("crash").model)
        ref_model = CostModel.from_dict(ref_store.model("ref").model)
    grid = np.array(np.meshgrid(*[a["levels"] for a in ref_model.attributes])).reshape(
        len(ref_model.attributes), -1).T
    np.testing.assert_allclose(model.predict_many(grid), ref_model.predict_many(grid),
                               rtol=1e-9, atol=0)


def test_resume_of_a_finished_campaign_runs_nothing(data: Path, tmp_path: Path) -> None:
    db = tmp_path / "done.db"
    subprocess.run(_replay(data, db, "done"), check=True, env=_env(), capture_output=True)
    with open_store(f"sqlite:///{db}") as store:
        before = [(r.run, r.attempts, r.status) for r in store.runs("done")]
    out = subprocess.run(_nimo("campaign", "resume", "done", "--store", f"sqlite:///{db}",
                               "--quiet"), env=_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    with open_store(f"sqlite:///{db}") as store:
        assert [(r.run, r.attempts, r.status) for r in store.runs("done")] == before


LIVE_DESIGN = fixed_runs_design("crash-live", 40)
LIVE_KNOBS = [  # short runs: ~0.3-1 s of application time each
    {"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 0.75, 1.0]},
    {"name": "memory_mb", "kind": "memory_mb", "levels": [96, 256]},
    {"name": "delay_ms", "kind": "delay_ms", "levels": [0, 2, 5]},
    {"name": "rate_mbit", "kind": "rate_mbit", "levels": [100, 200, 400]},
]


@pytest.fixture
def private_lab(tmp_path_factory):
    """A lab of its own: a crash test must not leave anything for other tests to trip on."""
    from conftest import running_lab

    with running_lab(tmp_path_factory, hosts=2) as the_lab:
        yield the_lab


@pytest.mark.lab
def test_live_campaign_killed_20_times_resumes_on_the_lab(private_lab, tmp_path: Path) -> None:
    """SIGKILL a live campaign at random points 20 times (mid-setup, mid-run, mid-collect,
    mid-commit); each resume cleans the hosts and re-runs only the interrupted run. Runs
    finished before a kill are never run again nor changed; at the end every run is done
    with exactly one sample and nothing of the emulation is left on the hosts."""
    from conftest import lab_inventory, leftovers

    design = tmp_path / "live.yaml"
    design.write_text(LIVE_DESIGN)
    lab = private_lab
    inventory = lab_inventory(
        lab, tmp_path, "checksum", 6, dataset="checksum-crash", name="inventory",
        knobs=LIVE_KNOBS, policies={"on_failure": "continue", "max_failures": 50, "retries": 0})
    db = tmp_path / "live.db"
    url = f"sqlite:///{db}"
    rng = np.random.default_rng(4)
    kills, launches, finished = 0, 0, False
    finished_before: dict[int, tuple[float, int]] = {}
    while not finished:
        assert launches < 60, "the live campaign never finished"
        if campaign_in_db(db, "live"):
            cmd = _nimo("campaign", "resume", "live", "--store", url, "--quiet")
        else:
            cmd = _nimo("campaign", "run", inventory, "--design", str(design),
                        "--store", url, "--name", "live", "--quiet")
        proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        launches += 1
        if kills < KILLS and _kill_live(proc, db, rng):
            kills += 1
            with open_store(url) as store:
                for r in store.runs("live") if campaign_in_db(db, "live") else ():
                    if r.status is RunStatus.DONE:  # never run again, never changed
                        assert finished_before.setdefault(r.run, (r.sample.T, r.attempts)) \
                            == (r.sample.T, r.attempts), f"run {r.run} changed after a kill"
            continue
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        finished = True
    assert kills == KILLS

    with open_store(url) as store:
        runs = store.runs("live")
        assert store.campaign("live").status == "done"
        samples = store.samples("live")
    bad = [(r.run, r.status.value, r.reason) for r in runs if r.status is not RunStatus.DONE]
    logs = {h.name: (lab.dir / "hosts" / h.name / "sshd.log").read_text()[-1500:]
            for h in lab.hosts if (lab.dir / "hosts" / h.name / "sshd.log").exists()}
    assert not bad, (bad, logs)
    assert [run for run, _ in samples] == [r.run for r in runs]  # one sample per run
    assert any(r.attempts > 1 for r in runs), "no kill ever interrupted a run"
    for run, (T, attempts) in finished_before.items():
        match = [r for r in runs if r.run == run][0]
        assert (match.sample.T, match.attempts) == (T, attempts)
    for host in lab.hosts:
        with lab.connect(host.name) as conn:
            left = {k: v for k, v in leftovers(conn).items() if v}
            assert not left, f"{host.name}: {left}"


def _kill_live(proc: subprocess.Popen, db: Path, rng: np.random.Generator) -> bool:
    """SIGKILL ``proc`` a random 0-1.5 s after its next finished run (so inside the next
    run's setup, run or collection), or a random 0.5-4 s after start. False if it ended."""
    start_runs = _done_runs(db)
    if rng.random() < 0.3:
        wait_until = time.monotonic() + rng.uniform(0.5, 4.0)
    else:
        deadline = time.monotonic() + 120
        while _done_runs(db) <= start_runs and time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            time.sleep(0.01)
        wait_until = time.monotonic() + rng.uniform(0.0, 1.5)
    while time.monotonic() < wait_until:
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True
