"""The interrupt's liveness probe (workbench.remote.liveness) with stand-in connections:
only a connection that is open and does not answer is cut, with a reason naming the wait;
closed connections leave the registry."""

from __future__ import annotations

import threading
import time

from workbench.remote import liveness


class Standin:
    def __init__(self, name: str, answer: bool | None, delay_s: float = 0.0) -> None:
        self.name, self.connect_timeout = name, 0.5
        self.answer, self.delay_s = answer, delay_s
        self.reason: str | None = None
        liveness.opened(self)

    def answers(self, within_s: float) -> bool | None:
        time.sleep(min(self.delay_s, within_s))
        return self.answer

    def cut(self, reason: str) -> None:
        self.reason = reason


def test_only_silent_open_connections_are_cut() -> None:
    silent, fine, closed = Standin("a", False), Standin("b", True), Standin("c", None)
    try:
        assert liveness.probe_all() == ["a"]
        assert silent.reason is not None and "no answer within 0.5 s" in silent.reason
        assert "nimo clean" in silent.reason
        assert fine.reason is None and closed.reason is None
    finally:
        for c in (silent, fine, closed):
            liveness.closed(c)
    assert not {"a", "b", "c"} & {c.name for c in liveness.open_connections()}


def test_the_connections_are_probed_at_once_not_one_after_another() -> None:
    slow = [Standin(f"s{i}", False, delay_s=0.5) for i in range(4)]
    try:
        t0 = time.monotonic()
        assert liveness.probe_all() == [f"s{i}" for i in range(4)]
        assert time.monotonic() - t0 < 1.5  # 4 x 0.5 s in parallel
    finally:
        for c in slow:
            liveness.closed(c)


class Transport:
    def __init__(self, replies: bool) -> None:
        self.replies = replies
        self.active = True

    def global_request(self, kind: str, wait: bool = True) -> None:
        assert kind == liveness.KEEPALIVE and wait
        if not self.replies:
            threading.Event().wait(5)

    def is_active(self) -> bool:
        return self.active


def test_a_keepalive_counts_only_when_the_reply_comes_in_time() -> None:
    assert liveness.keepalive_answered(Transport(replies=True), 1.0) is True
    t0 = time.monotonic()
    assert liveness.keepalive_answered(Transport(replies=False), 0.3) is False
    assert time.monotonic() - t0 < 1.0
    dead = Transport(replies=True)
    dead.active = False  # paramiko returns None when the transport died meanwhile
    assert liveness.keepalive_answered(dead, 0.5) is False


def _checked_until_silent(pulse: liveness.Pulse, limit_s: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        try:
            pulse.check()
        except liveness.Silent as e:
            assert "no answer to 3 keepalives in 0.6 s" in str(e)
            return time.monotonic() - t0
        time.sleep(0.01)
    return float("inf")


def test_a_pulse_finds_a_silent_host_after_its_misses() -> None:
    took = _checked_until_silent(liveness.Pulse(Transport(replies=False), 0.2), 3.0)
    assert 0.7 <= took < 1.5  # the first keepalive after 0.2 s, then 3 misses of 0.2 s


def test_a_pulse_never_gives_up_on_a_host_that_answers() -> None:
    assert _checked_until_silent(liveness.Pulse(Transport(replies=True), 0.2), 1.5) == float(
        "inf")
