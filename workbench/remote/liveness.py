"""Open connections that stop answering while an interrupt waits on them.

A host that hangs mid-command (a frozen machine, a partitioned network, a stopped sshd)
holds an interrupted run for its command's timeout, then every teardown command for its
own. On an interrupt (:func:`workbench.remote.handshakes.abandon_all`), every open
connection is asked for an SSH keepalive reply (:func:`probe_in_background`); one that
gives none within its ``connect_timeout`` is cut: the commands waiting on it end at once,
and its host refuses new commands and connects for the rest of the process (a new
connection to it too), naming why. What it leaves on the host is for a resume or ``nimo
clean``.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Protocol

KEEPALIVE = "keepalive@openssh.com"  # any request with want-reply: sshd answers (failure)


class Probed(Protocol):
    """What the probe needs of a connection (``workbench.remote.connection.Connection``)."""

    name: str
    connect_timeout: float

    def answers(self, within_s: float) -> bool | None:
        """True if the host answered a keepalive in time, False if not, None if the
        connection is not open."""
        ...

    def cut(self, reason: str) -> None:
        """Close the connection for good, ``reason`` naming why."""
        ...


_lock = threading.Lock()
_open: weakref.WeakSet[Probed] = weakref.WeakSet()
_silenced: dict[tuple[str, int], str] = {}  # (address, port) cut for good: why


def silence(endpoint: tuple[str, int], reason: str) -> None:
    """Every connection to ``endpoint``, also one made later, fails at once with
    ``reason`` for the rest of the process."""
    with _lock:
        _silenced[endpoint] = reason


def pardon(endpoint: tuple[str, int]) -> None:
    """Let connections to ``endpoint`` be made again (a host known to be back)."""
    with _lock:
        _silenced.pop(endpoint, None)


def silenced(endpoint: tuple[str, int]) -> str | None:
    """Why connections to ``endpoint`` were cut for good, or None."""
    with _lock:
        return _silenced.get(endpoint)


def opened(conn: Probed) -> None:
    """Register a connection that just opened."""
    with _lock:
        _open.add(conn)


def closed(conn: Probed) -> None:
    with _lock:
        _open.discard(conn)


def open_connections() -> list[Probed]:
    with _lock:
        return list(_open)


def probe_all() -> list[str]:
    """Ask every open connection to answer, concurrently; cut the silent ones. Returns the
    names of the connections cut."""
    conns = open_connections()
    cut: list[str] = []
    threads = [threading.Thread(target=_probe_one, args=(c, cut), daemon=True,
                                name=f"nimo-probe-{c.name}") for c in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(cut)


def probe_in_background() -> threading.Thread:
    """``probe_all`` in a daemon thread (an interrupt handler must not wait on it)."""
    thread = threading.Thread(target=probe_all, daemon=True, name="nimo-liveness")
    thread.start()
    return thread


def _probe_one(conn: Probed, cut: list[str]) -> None:
    wait_s = conn.connect_timeout
    if conn.answers(wait_s) is False:
        conn.cut(f"no answer within {wait_s:g} s after the interrupt (a hung host); "
                 "what the run left there is for a resume or `nimo clean`")
        cut.append(conn.name)


def ask(transport: object) -> threading.Event:
    """Send a keepalive that wants a reply on a paramiko transport; the event is set when
    the reply (a success or a failure) comes."""
    answered = threading.Event()

    def wait_for_reply() -> None:
        try:
            transport.global_request(KEEPALIVE, wait=True)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a dead transport is no answer
            return
        if transport.is_active():  # type: ignore[attr-defined]
            answered.set()

    threading.Thread(target=wait_for_reply, daemon=True, name="nimo-keepalive").start()
    return answered


def keepalive_answered(transport: object, within_s: float) -> bool:
    """Whether a keepalive sent on ``transport`` got its reply within ``within_s``."""
    return ask(transport).wait(within_s)


class Silent(Exception):
    """The host answered none of a command's last keepalives (``Pulse``)."""


class Pulse:
    """OpenSSH's ServerAlive for one command: every ``every_s`` a keepalive that wants a
    reply; once ``misses`` in a row got none (each given ``every_s``), the host is silent:
    a frozen machine or a cut network, not a slow command (sshd answers for any)."""

    def __init__(self, transport: object, every_s: float, misses: int = 3) -> None:
        self.transport, self.every_s, self.misses = transport, every_s, misses
        self._asked_at = time.monotonic()
        self._pending: threading.Event | None = None
        self._missed = 0

    def check(self) -> None:
        """Called while the command runs; raises ``Silent`` once the host is."""
        now = time.monotonic()
        if now - self._asked_at < self.every_s:
            return
        if self._pending is not None:
            self._missed = 0 if self._pending.is_set() else self._missed + 1
            if self._missed >= self.misses:
                raise Silent(f"no answer to {self.misses} keepalives in "
                             f"{self.misses * self.every_s:g} s (a hung host)")
        self._pending = ask(self.transport)
        self._asked_at = now
