"""Faults on the lab: each run is marked FAILED with a one-line reason, never raises, and no
emulation state (qdiscs, iptables rules, cgroups, mounts, work dirs) is left on any host."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest
import yaml

from nimo.records import RunRequest, RunStatus
from workbench.executor import open_runner

pytestmark = [pytest.mark.lab, pytest.mark.slow]

A = {"cpu_share": 0.5, "memory_mb": 96, "delay_ms": 2, "rate_mbit": 100}


def inventory(lab, tmp_path, command: list[str], **app) -> str:
    doc = yaml.safe_load(lab.inventory_path.read_text())
    doc["application"].update(command=command, timeout_s=app.pop("timeout_s", 30), **app)
    doc["application"]["dataset"].update(path="faults", size_mb=1)
    doc["policies"] = {"on_failure": "continue", "retries": 0}
    doc["monitors"]["profile"] = False
    path = tmp_path / "faults.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def all_clean(lab, assert_clean) -> None:
    for name in ("compute1", "compute2", "storage1"):
        with lab.connect(name) as conn:
            for iface in (["data0", "data1"] if name == "storage1" else ["data0"]):
                assert_clean(conn, iface)


def one(path: str, run: int = 1):
    with open_runner(path) as runner:
        return runner.run(RunRequest(run, A, "train"))


def test_nonzero_exit(lab, tmp_path, assert_clean):
    cmd = ["python3", "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
    out = one(inventory(lab, tmp_path, cmd))
    assert out.status is RunStatus.FAILED and out.sample is None
    assert out.reason.startswith("G exited 3") and "boom" in out.reason
    assert "\n" not in out.reason
    all_clean(lab, assert_clean)


def test_oom_kill_is_named(lab, tmp_path, assert_clean):
    cmd = ["python3", "-c", "x = bytearray(400 * 2**20); print(len(x))"]
    out = one(inventory(lab, tmp_path, cmd))
    assert out.status is RunStatus.FAILED
    assert "OOM kill" in out.reason and "memory_mb=96" in out.reason
    all_clean(lab, assert_clean)


def test_timeout_kills_g_and_cleans_up(lab, tmp_path, assert_clean):
    cmd = ["sh", "-c", "sleep 31.234 & sleep 31.234; wait"]  # a child too: the cgroup kill gets it
    t0 = time.monotonic()
    out = one(inventory(lab, tmp_path, cmd, timeout_s=1.5))
    assert time.monotonic() - t0 < 15
    assert out.status is RunStatus.FAILED and out.reason.startswith("timeout")
    assert "1.5 s" in out.reason
    with lab.connect("compute1") as conn:
        ps = conn.run(["ps", "-eo", "args"]).stdout
    assert "sleep 31.234" not in ps
    all_clean(lab, assert_clean)


def test_unreachable_host(lab, tmp_path):
    """compute1 is unreachable: it leaves the rotation (issue 11) and compute2 runs it."""
    path = inventory(lab, tmp_path, ["true"])
    doc = yaml.safe_load(Path(path).read_text())
    doc["hosts"][1]["port"] = 1  # compute1: nothing listens there
    doc["policies"]["retries"] = 1
    Path(path).write_text(yaml.safe_dump(doc))
    t0 = time.monotonic()
    with open_runner(path) as runner:  # each lane takes one; compute1 hands its run back
        outs = runner.run_many([RunRequest(1, A, "train"), RunRequest(2, A, "train")])
        assert runner.rotation.failures("compute1") >= 1 and runner.failures == 0
    assert time.monotonic() - t0 < 20
    assert [(o.ok, o.host) for o in outs] == [(True, "compute2")] * 2


def test_connection_dropped_mid_run(lab, tmp_path, assert_clean):
    """Kill compute1's per-connection sshd processes while G runs; the listener survives,
    so teardown reconnects and removes everything."""
    out = {}
    path = inventory(lab, tmp_path, ["sleep", "6.789"])
    doc = yaml.safe_load(Path(path).read_text())  # compute1 alone: no host to hand it to
    doc["hosts"] = [h for h in doc["hosts"] if h["name"] != "compute2"]
    Path(path).write_text(yaml.safe_dump(doc))

    def run():
        out["o"] = one(path)

    t = threading.Thread(target=run)
    t.start()
    listener = lab.sshd_pid("compute1")
    deadline = time.monotonic() + 30
    with lab.connect("compute1") as conn:  # wait until G runs (set-up done)
        while "sleep 6.789" not in conn.run(["ps", "-eo", "args"]).stdout:
            assert time.monotonic() < deadline, "G never started"
            time.sleep(0.1)
    kids = Path(f"/proc/{listener}/task/{listener}/children").read_text()
    children = [int(p) for p in kids.split()]
    assert children, "no SSH session to drop"
    for pid in children:
        os.kill(pid, 9)
    t.join(60)
    o = out["o"]
    assert o.status is RunStatus.FAILED
    assert "running" in o.reason and ("dropped" in o.reason or "closed" in o.reason), o.reason
    all_clean(lab, assert_clean)


def test_shell_metacharacters_never_reach_a_shell(lab, tmp_path, assert_clean):
    evil = ["; touch /tmp/nimo-pwned1 #", "$(touch /tmp/nimo-pwned2)", "`touch /tmp/nimo-pwned3`",
            "a'b\"c", "x > /tmp/nimo-pwned4"]
    cmd = ["python3", "-c",
           "import json, sys; print(json.dumps(dict(('a%d' % i, v) "
           "for i, v in enumerate(sys.argv[1:]))))",
           *evil, "{workdir}"]
    workdir = "/tmp/nimo meta;$(touch /tmp/nimo-pwned5)"
    top = "/tmp/nimo meta;$(touch "  # the first of the parents the run makes
    shutil.rmtree(top, ignore_errors=True)  # an older session's
    out = one(inventory(lab, tmp_path, cmd, workdir=workdir))
    assert out.ok, out.reason
    got = out.sample.meta["app_output"]
    assert [got[f"a{i}"] for i in range(len(evil))] == evil
    assert got[f"a{len(evil)}"].startswith(workdir + "/nimo-")
    for i in range(1, 6):
        assert not os.path.exists(f"/tmp/nimo-pwned{i}")
    assert not os.path.exists(workdir)  # the parents the run made are removed
    assert not os.path.exists(top)
    all_clean(lab, assert_clean)


def test_stop_policy_stops_the_batch(lab, tmp_path):
    from workbench.executor.stops import FailureBudgetExceeded

    path = inventory(lab, tmp_path, ["false"])
    doc = yaml.safe_load(Path(path).read_text())
    doc["policies"]["on_failure"] = "stop"
    Path(path).write_text(yaml.safe_dump(doc))
    seen = []
    with open_runner(path) as runner, pytest.raises(FailureBudgetExceeded):
        runner.run_many([RunRequest(i, A, "train") for i in (1, 2, 3, 4)], seen.append)
    # the two lanes finished the runs they had started; runs 3 and 4 never started
    assert sorted(o.request.run for o in seen) == [1, 2]
    assert all(o.status is RunStatus.FAILED for o in seen)
    assert runner.stopped_because


def test_keyboard_interrupt_tears_down_then_propagates(lab, tmp_path, assert_clean):
    import _thread

    path = inventory(lab, tmp_path, ["sleep", "23.456"])
    timer = threading.Timer(3.5, _thread.interrupt_main)
    t0 = time.monotonic()
    with open_runner(path) as runner:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            runner.run(RunRequest(1, A, "train"))
    assert time.monotonic() - t0 < 15
    with lab.connect("compute1") as conn:
        assert "sleep 23.456" not in conn.run(["ps", "-eo", "args"]).stdout
    all_clean(lab, assert_clean)
