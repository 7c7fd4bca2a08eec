"""A host that hangs mid-command (every sshd process of it stopped: a frozen machine) while
an interrupt waits on it: the interrupt's liveness probe cuts its connection within the
connection's timeout instead of the command's, later commands on it fail at once naming
why, and a healthy host's command in flight is left alone."""

from __future__ import annotations

import threading
import time

import pytest

from workbench.errors import HostError
from workbench.remote import liveness
from workbench.remote.handshakes import abandon_all

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _in_thread(fn) -> tuple[threading.Thread, dict]:
    got: dict = {}

    def call() -> None:
        t0 = time.monotonic()
        try:
            got["result"] = fn()
        except Exception as e:  # noqa: BLE001 - the test reads it
            got["error"] = e
        got["ended"] = time.monotonic()
        got["took"] = got["ended"] - t0

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread, got


def test_an_interrupt_cuts_a_host_that_hangs_mid_command(lab, freeze):
    hung = lab.connect("compute1", connect_timeout=3.0)
    healthy = lab.connect("compute2", connect_timeout=3.0)
    try:
        hung.open()
        healthy.open()
        waiting, got = _in_thread(lambda: hung.run(["sleep", "60"], timeout=120))
        finishing, fine = _in_thread(lambda: healthy.run(["sleep", "2"], timeout=60))
        time.sleep(0.5)
        with freeze("compute1"):
            pressed = time.monotonic()
            abandon_all()  # what an interrupt does
            waiting.join(20)
            assert not waiting.is_alive(), "the command on the hung host still waits"
            assert got["ended"] - pressed < 3.0 + 3.0  # its connect_timeout, and slack
            error = got["error"]
            assert isinstance(error, HostError)
            assert "compute1" in str(error) and "no answer within 3 s" in str(error)
            t0 = time.monotonic()
            with pytest.raises(HostError, match="no answer within 3 s"):
                hung.run(["true"], timeout=30)
            with pytest.raises(HostError, match="no answer within 3 s"):
                hung.open()
            assert time.monotonic() - t0 < 1.0  # at once, not after a timeout
        finishing.join(20)
        assert "error" not in fine, fine.get("error")
        assert fine["result"].ok and healthy.is_open  # the healthy host was not cut
        assert healthy.run(["true"], timeout=30).ok
        with pytest.raises(HostError, match="no answer within 3 s"):
            lab.connect("compute1").open()  # a new connection to the cut host, too
    finally:
        hung.close()
        healthy.close()
        host = lab.host("compute1")
        liveness.pardon((host.address, host.port))  # later tests use compute1


def test_the_probe_leaves_answering_connections_open(lab):
    with lab.connect("compute2") as conn:
        conn.open()
        assert conn.answers(5.0) is True
        assert conn.name not in liveness.probe_all()
        assert conn.run(["true"], timeout=30).ok
    assert conn.answers(5.0) is None  # closed: nothing to ask


def test_a_command_on_a_host_that_stops_answering_ends_after_its_keepalives(lab, freeze):
    """No interrupt: the command's keepalives (ServerAlive) find the frozen host; its
    connection is closed, not cut for good, so a command after the host recovers runs."""
    conn = lab.connect("compute1", alive_interval_s=1.0)
    try:
        conn.open()
        waiting, got = _in_thread(lambda: conn.run(["sleep", "60"], timeout=120))
        time.sleep(0.5)
        with freeze("compute1"):
            waiting.join(20)
            assert not waiting.is_alive(), "the command on the frozen host still waits"
        assert got["took"] < 10.0
        error = got["error"]
        assert isinstance(error, HostError)
        assert "compute1" in str(error) and "no answer to 3 keepalives in 3 s" in str(error)
        conn.open()  # the host answers again: a new connection
        assert conn.run(["true"], timeout=30).ok
    finally:
        conn.close()
