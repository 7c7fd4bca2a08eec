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

from nimo.model import CostModel
from nimo.samples import RunStatus
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
