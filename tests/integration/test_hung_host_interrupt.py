"""Ctrl-C while a campaign or the doctor waits on a hung host (it accepts TCP and never sends
an SSH banner): the command exits at once, in one line, with 130, and the campaign is stored
as interrupted with no run counted as failed for it. Needs only 127.0.0.1 (no lab)."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

MAIN = "import sys; from workbench.cli import main; sys.exit(main())"
INVENTORY = """\
version: 1
name: hung
hosts:
  - {{name: compute1, address: 127.0.0.1, port: {port}, key_file: key,
     known_hosts: known_hosts, role: compute, data_iface: data0, data_address: 10.9.1.1,
     peer: storage1}}
  - {{name: storage1, address: 127.0.0.1, port: {port}, key_file: key,
     known_hosts: known_hosts, role: storage, data_iface: data0, data_address: 10.9.1.2}}
storage: {{method: sshfs, export: /srv/nimo}}
knobs:
  - {{name: cpu_share, kind: cpu_share, levels: [0.5, 1.0]}}
  - {{name: rate_mbit, kind: rate_mbit, levels: [20, 100]}}
application:
  name: checksum
  command: [python3, "{{app_dir}}/checksum.py", "{{dataset}}"]
  dataset: {{path: checksum, size_mb: 4}}
"""


@pytest.fixture
def hung_inventory(tmp_path: Path, silent_port: int) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "key")],
                   check=True)
    (tmp_path / "known_hosts").write_text("")
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(INVENTORY.format(port=silent_port))
    return inventory


def _interrupted(args: list[str], cwd: Path, after_s: float = 2.0,
                 ready: Callable[[], bool] | None = None) -> tuple[int, str, float]:
    """Run ``nimo ARGS``, press Ctrl-C ``after_s`` after ``ready()`` holds (at most 60 s
    of waiting for it; None: after the start); (exit code, stderr, seconds from the Ctrl-C
    to the exit)."""
    proc = subprocess.Popen([sys.executable, "-c", MAIN, *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if ready is not None:
        deadline = time.monotonic() + 60
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the command was not ready after 60 s"
            time.sleep(0.1)
    time.sleep(after_s)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    pressed = time.monotonic()
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, time.monotonic() - pressed


def _stored_campaigns(store: Path) -> int:
    """How many campaigns the SQLite store holds (0 while it or its table does not exist;
    a slow machine may still be starting the command after a fixed delay)."""
    if not store.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(store, timeout=0.1)) as db:
            return int(db.execute("select count(*) from nimo_campaigns").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_ctrl_c_while_the_doctor_waits_on_a_hung_host_exits_at_once(hung_inventory):
    code, err, took = _interrupted(["doctor", str(hung_inventory)], hung_inventory.parent)
    assert code == 130 and took < 4, (took, err)  # not the 10 s connect timeout
    assert err.strip() == "nimo doctor: interrupted (Ctrl-C)"


def test_ctrl_c_while_a_run_connects_to_a_hung_host(hung_inventory):
    store = hung_inventory.parent / "c.db"
    code, err, took = _interrupted(  # the campaign stored, its run connecting (10 s timeout)
        ["campaign", "run", str(hung_inventory), "--skip-doctor", "--name", "h",
         "--store", f"sqlite:///{store}"], hung_inventory.parent, after_s=1.5,
        ready=lambda: _stored_campaigns(store) > 0)
    assert code == 130 and took < 4, (took, err)  # not 3 attempts x 10 s
    assert "Traceback" not in err and "interrupted (Ctrl-C)" in err
    with sqlite3.connect(store) as db:
        status = db.execute("select status from nimo_campaigns").fetchone()[0]
        reasons = [r for (r,) in db.execute("select reason from nimo_runs")]
    assert status == "interrupted"
    assert not [r for r in reasons if r and "unreachable" in r], reasons


def test_ctrl_c_stops_a_service_whose_campaign_connects_to_a_hung_host(hung_inventory):
    """`nimo serve` stops its campaigns on Ctrl-C; a run still connecting is stopped too
    (it waited out three 10 s attempts), and paramiko's handshake tracebacks stay out of
    the service's log."""
    store = f"sqlite:///{hung_inventory.parent / 'q.db'}"
    subprocess.run([sys.executable, "-c", MAIN, "campaign", "submit", "--inventory",
                    str(hung_inventory), "--store", store, "q1"], check=True,
                   cwd=hung_inventory.parent, capture_output=True)
    code, err, took = _interrupted(["serve", "--store", store], hung_inventory.parent,
                                   after_s=3.0)
    assert code == 130 and took < 4, (took, err)
    assert "paramiko" not in err and "Traceback" not in err, err
    with sqlite3.connect(store.removeprefix("sqlite:///")) as db:
        status = db.execute("select status from nimo_campaigns").fetchone()[0]
        reasons = [r for (r,) in db.execute("select reason from nimo_runs")]
    assert status == "queued" and all(r == "interrupted" for r in reasons), reasons
