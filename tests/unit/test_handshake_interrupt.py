"""Ctrl-C against a hung host: handshakes in flight are cut, nothing waits out the connect
timeout, and a hung sshd is named as such (a real silent TCP port on 127.0.0.1)."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

from workbench.errors import HostError
from workbench.remote import Connection, handshakes
from workbench.remote.group import run_parallel
from workbench.remote.handshakes import abandon_all


def _hung(port: int, tmp_path, timeout: float = 10.0, retries: int = 3) -> Connection:
    known = tmp_path / "known_hosts"
    known.write_text("")
    return Connection("127.0.0.1", name="hung", port=port, known_hosts=known,
                      connect_timeout=timeout, retries=retries, backoff_s=0.0)


def test_a_silent_port_is_reported_as_sending_no_ssh_banner_and_not_retried(
        silent_port, tmp_path):
    """Waiting for a hung sshd's banner again is no retry: a run on it failed only after
    three connect timeouts (30 s) while the campaign waited."""
    began = time.monotonic()
    with pytest.raises(HostError) as err:
        _hung(silent_port, tmp_path, timeout=0.5, retries=3).open()
    assert time.monotonic() - began < 1.5  # one 0.5 s timeout, not four
    assert str(err.value).startswith(f"hung: unreachable at 127.0.0.1:{silent_port} after 1 "
                                     "attempt: no SSH banner within 0.5 s")
    assert "No existing session" not in str(err.value)


def test_abandoning_cuts_a_connect_at_once_and_it_is_not_retried(silent_port, tmp_path):
    conn = _hung(silent_port, tmp_path)  # 4 attempts of 10 s each if nothing cuts them
    errors: list[BaseException] = []

    def connect() -> None:
        try:
            conn.open()
        except HostError as e:
            errors.append(e)

    worker = threading.Thread(target=connect)
    worker.start()
    time.sleep(0.5)
    began = time.monotonic()
    assert abandon_all() == 1
    worker.join(timeout=5)
    assert not worker.is_alive() and time.monotonic() - began < 3
    assert "abandoned: interrupted" in str(errors[0])


def test_a_connect_begun_after_an_abandonment_runs_normally(silent_port, tmp_path):
    abandon_all()
    began = time.monotonic()
    with pytest.raises(HostError) as err:
        _hung(silent_port, tmp_path, timeout=0.5, retries=1).open()
    assert time.monotonic() - began >= 0.45  # it waited for its banner
    assert "no SSH banner within 0.5 s" in str(err.value)


def test_ctrl_c_during_parallel_connects_returns_at_once_with_no_step_left(
        silent_port, tmp_path):
    conns = [_hung(silent_port, tmp_path) for _ in range(3)]
    threading.Timer(0.5, _thread.interrupt_main).start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_parallel({str(i): c.open for i, c in enumerate(conns)})
    assert time.monotonic() - began < 4  # not the 10 s connect timeout
    assert not handshakes.in_flight()  # every step ended before the interrupt was raised
    for t in [t for t in threading.enumerate() if t.name.startswith("nimo-step")]:
        t.join(timeout=2)  # idle pool threads leave once they see the shutdown
        assert not t.is_alive()
