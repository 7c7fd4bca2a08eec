"""Issue 11's executor defects on the lab, each through the real CLI:

* 6: SIGTERM and SIGHUP tear down as Ctrl-C does (``campaign run``, ``resume``, ``serve``);
* 10: a run that moves no data is a valid sample;
* 11: with one compute host's data link down the runs go to the healthy host; with every
  link down the campaign fails (never "done" with 0 samples) and resume recovers it;
* 13: a refused storage login (host key, known_hosts, key) stops the campaign at once;
* a failure reason starts with its cause (the failing command's last stderr line).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from nimo.records import RunStatus
from nimo.store import open_store
from workbench.clean import read_markers

pytestmark = [pytest.mark.lab, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
DESIGN = "extends: recommended\nstop: {max_runs: %d}\n"


def nimo(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def inventory(lab, tmp_path: Path, command: list[str], name: str = "inv", **changes) -> str:
    doc = yaml.safe_load(lab.inventory_path.read_text())
    doc["application"].update(command=command, timeout_s=60)
    doc["application"]["dataset"] = {"path": "issue11", "size_mb": 1,
                                     "generate": ["mkdir", "-p", "{dataset}"]}
    doc["policies"] = {"on_failure": "continue", "retries": 0}
    doc["monitors"]["profile"] = False
    for key, value in changes.items():
        doc[key] = {**doc[key], **value} if isinstance(value, dict) else value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def design(tmp_path: Path, runs: int) -> str:
    path = tmp_path / f"design{runs}.yaml"
    path.write_text(DESIGN % runs)
    return str(path)


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(nimo(*args), env=env(), capture_output=True, text=True,
                          timeout=timeout)


def all_clean(lab, assert_clean) -> None:
    for host in ("compute1", "compute2", "storage1"):
        with lab.connect(host) as conn:
            for iface in (["data0", "data1"] if host == "storage1" else ["data0"]):
                assert_clean(conn, iface)


def wait_for_g(lab, marker: str, proc: subprocess.Popen[str], timeout_s: float = 60) -> None:
    """Until G (its argv holds ``marker``) runs on a compute host."""
    deadline = time.monotonic() + timeout_s
    with lab.connect("compute1") as conn:  # the lab's hosts share one process table
        while marker not in conn.run(["ps", "-eo", "args"]).stdout:
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "G never started"
            time.sleep(0.1)


def g_gone(lab, marker: str) -> bool:
    with lab.connect("compute1") as conn:
        return marker not in conn.run(["ps", "-eo", "args"]).stdout


# -- defect 6 ---------------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_tears_a_live_campaign_down_as_ctrl_c_does(lab, tmp_path, assert_clean, sig):
    marker = f"sleep 41.{sig.value}"
    inv = inventory(lab, tmp_path, ["sh", "-c", f"{marker}; true"])
    url = f"sqlite:///{tmp_path}/sig.db"
    for verb in ("run", "resume"):
        args = (["campaign", "run", inv, "--design", design(tmp_path, 4), "--name", "sig"]
                if verb == "run" else ["campaign", "resume", "sig"])
        proc = subprocess.Popen(nimo(*args, "--store", url, "--skip-doctor", "--quiet"),
                                env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        wait_for_g(lab, marker, proc)
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig.value, err
        assert time.monotonic() - t0 < 20, "teardown waited for G instead of killing it"
        assert f"interrupted (signal {sig.value})" in err
        assert g_gone(lab, marker)
        all_clean(lab, assert_clean)
        for host in ("compute1", "compute2", "storage1"):  # torn down: markers gone too
            with lab.connect(host) as conn:
                assert read_markers(conn, "sig").files == [], host
        with open_store(url) as store:
            info = store.campaign("sig")
            assert info.status == "interrupted" and f"signal {sig.value}" in info.stopped_because
            runs = store.runs("sig")
            assert runs and all(r.status is RunStatus.INTERRUPTED for r in runs)


def test_serve_stopped_by_sigterm_tears_down_and_queues_its_campaign(lab, tmp_path,
                                                                     assert_clean):
    marker = "sleep 42.5"
    inv = inventory(lab, tmp_path, ["sh", "-c", f"{marker}; true"])
    url = f"sqlite:///{tmp_path}/serve.db"
    submitted = run_cli("campaign", "submit", "served", "--inventory", inv, "--design",
                        design(tmp_path, 4), "--store", url)
    assert submitted.returncode == 0, submitted.stderr
    proc = subprocess.Popen(nimo("serve", "--store", url, "--poll", "0.2"), env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_g(lab, marker, proc)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert time.monotonic() - t0 < 20
    assert g_gone(lab, marker)
    all_clean(lab, assert_clean)
    with open_store(url) as store:
        assert store.campaign("served").status == "queued"  # the next service resumes it
        assert not [r for r in store.runs("served") if r.status is RunStatus.QUEUED]
        assert store.leases() == []


# -- defect 10 --------------------------------------------------------------------------
def test_a_campaign_of_runs_that_move_no_data(lab, tmp_path):
    inv = inventory(lab, tmp_path, ["python3", "-c", "sum(range(3 * 10**6))"])
    url = f"sqlite:///{tmp_path}/nodata.db"
    done = run_cli("campaign", "run", inv, "--design", design(tmp_path, 3), "--name", "nd",
                   "--store", url, "--skip-doctor", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(url) as store:
        assert store.campaign("nd").status == "done"
        samples = [s for _, s in store.samples("nd")]
    assert len(samples) == 3
    for s in samples:
        # no dataset was read: at most the sshfs session's keepalives crossed the data link
        assert s.meta["data_bytes"] < 1024
        if s.meta["data_bytes"] == 0:
            assert s.o_n == 0.0 and s.o_d == 0.0
        assert s.D * (s.o_a + s.o_n + s.o_d) == pytest.approx(s.T)


# -- defect 11 --------------------------------------------------------------------------
@contextlib.contextmanager
def links_down(lab, *hosts: str) -> Iterator[None]:
    """The data links of ``hosts`` down while inside; always brought up again."""
    try:
        for h in hosts:
            subprocess.run(["ip", "netns", "exec", lab.host(h).netns, "ip", "link", "set",
                            "data0", "down"], check=True)
        yield
    finally:
        for h in hosts:
            subprocess.run(["ip", "netns", "exec", lab.host(h).netns, "ip", "link", "set",
                            "data0", "up"], check=False)
        time.sleep(0.5)


def test_runs_avoid_a_compute_host_whose_data_link_is_down(lab, tmp_path):
    inv = inventory(lab, tmp_path, ["sh", "-c", "cat {dataset}/* >/dev/null 2>&1; true"])
    url = f"sqlite:///{tmp_path}/link.db"
    with links_down(lab, "compute1"):
        done = run_cli("campaign", "run", inv, "--design", design(tmp_path, 4), "--name",
                       "half", "--store", url, "--skip-doctor", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(url) as store:
        runs = store.runs("half")
        assert store.campaign("half").status == "done"
    assert len(runs) == 4 and all(r.status is RunStatus.DONE for r in runs)
    assert {r.sample.meta["host"] for r in runs} == {"compute2"}


def test_every_link_down_fails_the_campaign_and_resume_recovers_it(lab, tmp_path):
    inv = inventory(lab, tmp_path, ["sh", "-c", "cat {dataset}/* >/dev/null 2>&1; true"])
    url = f"sqlite:///{tmp_path}/down.db"
    with links_down(lab, "compute1", "compute2"):
        broken = run_cli("campaign", "run", inv, "--design", design(tmp_path, 3), "--name",
                         "down", "--store", url, "--skip-doctor", "--quiet")
    assert broken.returncode == 3, broken.stdout + broken.stderr
    assert "FAILED" in broken.stdout and "Network is unreachable" in broken.stdout
    with open_store(url) as store:
        assert store.campaign("down").status == "failed"
        assert store.samples("down") == []
    again = run_cli("campaign", "resume", "down", "--store", url, "--skip-doctor", "--quiet")
    assert again.returncode == 0, again.stdout + again.stderr
    with open_store(url) as store:
        assert store.campaign("down").status == "done"
        assert len(store.samples("down")) == 3


# -- defect 13 --------------------------------------------------------------------------
def _forged_known_hosts(lab, tmp_path: Path) -> str:
    lines = lab.known_hosts.read_text().splitlines()
    other = next(ln.split(" ", 1)[1] for ln in lines
                 if ln.startswith(lab.host("compute1").address + " "))
    storage = lab.host("storage1")
    forged = [f"{ln.split(' ', 1)[0]} {other}"
              if ln.split(" ", 1)[0] in (storage.address, storage.data_address) else ln
              for ln in lines]
    path = tmp_path / "forged_known_hosts"
    path.write_text("\n".join(forged) + "\n")
    return str(path)


@pytest.mark.parametrize("case", ["host key changed", "known_hosts missing", "key rejected"])
def test_a_refused_storage_login_stops_the_campaign_at_once(lab, tmp_path, case):
    if case == "host key changed":
        storage, cause = {"known_hosts": _forged_known_hosts(lab, tmp_path)}, \
            "Host key verification failed"
    elif case == "known_hosts missing":
        storage, cause = {"known_hosts": str(tmp_path / "none")}, "Host key verification failed"
    else:
        key = tmp_path / "other_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True)
        storage, cause = {"identity_file": str(key)}, "Permission denied"
    inv = inventory(lab, tmp_path, ["true"], storage=storage)
    url = f"sqlite:///{tmp_path}/refused.db"
    t0 = time.monotonic()
    out = run_cli("campaign", "run", inv, "--design", design(tmp_path, 6), "--name", "ref",
                  "--store", url, "--skip-doctor", "--quiet")
    assert out.returncode == 2, out.stdout + out.stderr
    assert time.monotonic() - t0 < 60
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "compute" in lines[0] and cause in lines[0], out.stderr
    with open_store(url) as store:
        info = store.campaign("ref")
        assert info.status == "failed" and cause in info.stopped_because
        assert not [r for r in store.runs("ref") if r.status is RunStatus.FAILED]


# -- failure reasons keep their cause -----------------------------------------------------
def test_a_failure_reason_starts_with_its_cause(lab, tmp_path, assert_clean):
    """A dataset generator with a long command line fails with 'No space left on device'
    as its last stderr line: the stored and printed reason start with it. Each run prepared
    the storage host again: one private app dir, removed at the end."""
    padding = "x" * 400  # the command line alone is longer than a reason may be
    gen = ["sh", "-c", "echo progress >&2; echo 'write error: No space left on device' >&2; "
           "exit 1", "gen", padding]
    inv = inventory(lab, tmp_path, ["true"])
    doc = yaml.safe_load(Path(inv).read_text())
    doc["application"]["dataset"] = {"path": "issue11-full", "size_mb": 1, "generate": gen}
    Path(inv).write_text(yaml.safe_dump(doc, sort_keys=False))
    url = f"sqlite:///{tmp_path}/reason.db"
    out = run_cli("campaign", "run", inv, "--design", design(tmp_path, 2), "--name", "why",
                  "--store", url, "--skip-doctor", "--quiet")
    assert out.returncode == 3, out.stdout + out.stderr
    with open_store(url) as store:  # every run failed: reopened for a resume, reason kept
        reasons = [r.reason or "" for r in store.runs("why")]
    assert reasons and all(r.startswith("interrupted (write error: No space left on device")
                           for r in reasons), reasons
    assert "run 2: write error: No space left on device" in out.stdout
    all_clean(lab, assert_clean)


def test_a_second_signal_does_not_stop_the_teardown(lab, tmp_path, assert_clean):
    """Two SIGTERMs in a row (systemd, then an impatient operator): the second one is
    noted, the teardown still completes, the runs in flight are interrupted."""
    marker = "sleep 43.25"
    inv = inventory(lab, tmp_path, ["sh", "-c", f"{marker}; true"])
    url = f"sqlite:///{tmp_path}/twice.db"
    proc = subprocess.Popen(nimo("campaign", "run", inv, "--design", design(tmp_path, 4),
                                 "--name", "twice", "--store", url, "--skip-doctor", "--quiet"),
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_g(lab, marker, proc)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "tearing down the runs in flight" in err
    assert g_gone(lab, marker)
    all_clean(lab, assert_clean)
    with open_store(url) as store:
        assert all(r.status is RunStatus.INTERRUPTED for r in store.runs("twice"))


def test_ctrl_c_with_the_runs_host_frozen_exits_within_its_connect_timeout(
        lab, tmp_path, assert_clean, freeze):
    """Every sshd of compute1 stopped while G runs there, then Ctrl-C: the probe cuts the
    silent host (workbench.remote.liveness) and the command exits 130 within its 10 s
    connect timeout, not after G's timeout and one per teardown command (30-50 s before);
    the run is interrupted, not failed; its objects stay recorded for a resume or `nimo
    clean`, which removes them once the host answers again."""
    marker = "sleep 44.5"
    inv = inventory(lab, tmp_path, ["sh", "-c", f"{marker}; true"], name="frozen")
    url = f"sqlite:///{tmp_path}/frozen.db"
    proc = subprocess.Popen(nimo("campaign", "run", inv, "--design", design(tmp_path, 4),
                                 "--name", "frozen", "--store", url, "--skip-doctor",
                                 "--quiet"),
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_g(lab, marker, proc)
    with freeze("compute1"):
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    assert proc.returncode == 130, err
    assert took < 20, f"{took:.1f} s from Ctrl-C to exit"
    assert "compute1: no answer within 10 s after the interrupt (a hung host)" in err
    assert "campaign frozen interrupted (Ctrl-C)" in err
    with open_store(url) as store:
        runs = store.runs("frozen")
        assert runs and all(r.status is RunStatus.INTERRUPTED for r in runs), runs
        assert {o.host for o in store.host_objects("frozen")} == {"compute1"}
    cleaned = run_cli("clean", "--campaign", "frozen", inv)
    assert cleaned.returncode == 0, cleaned.stderr
    all_clean(lab, assert_clean)
