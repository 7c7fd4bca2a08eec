"""SSH handshakes in progress, so that an interrupt can cut them short.

A host that accepts TCP but never answers (a hung sshd) holds a connect for its whole
timeout. Threads waiting on it would keep an interrupted command alive that long after
Ctrl-C, so the main thread, on an interrupt, shuts down the sockets of every handshake in
flight (:func:`abandon_all`): each fails at once, and a connect that began before the
abandonment is not retried (:meth:`Handshake.abandoned`).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import paramiko

from workbench.errors import HostRefused

_lock = threading.Lock()
_sockets: set[socket.socket] = set()
_generation = 0  # how many times handshakes were abandoned in this process


class Handshake:
    """One connect (all its attempts): whether an interrupt abandoned it since it began."""

    def __init__(self) -> None:
        self._began = _generation

    def abandoned(self) -> bool:
        return _generation != self._began

    @contextlib.contextmanager
    def holding(self, sock: socket.socket) -> Iterator[socket.socket]:
        """Register ``sock`` while its handshake runs; an already abandoned connect is
        cut at once."""
        with _lock:
            _sockets.add(sock)
        try:
            if self.abandoned():
                _cut(sock)
            yield sock
        finally:
            with _lock:
                _sockets.discard(sock)


def in_flight() -> int:
    """How many handshakes are running now."""
    with _lock:
        return len(_sockets)


def abandon_all() -> int:
    """Cut every handshake in flight and keep their connects from retrying; returns how
    many sockets were cut. Open connections that no longer answer are cut too, in the
    background (``workbench.remote.liveness``)."""
    from workbench.remote import liveness

    global _generation
    with _lock:
        _generation += 1
        cut = list(_sockets)
    for sock in cut:
        _cut(sock)
    liveness.probe_in_background()
    return len(cut)


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def describe(e: BaseException | None) -> str:
    if e is None:
        return "unknown error"
    if isinstance(e, socket.timeout | TimeoutError):
        return "connection timed out"
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text


class NoBanner(paramiko.SSHException):
    """The host accepted TCP but sent no SSH banner in time (a hung sshd, another service)."""

    def __init__(self, timeout_s: float | None, cause: Exception) -> None:
        why = (f"within {timeout_s:g} s (a hung sshd, or not an SSH port)" if timeout_s
               else f"({describe(cause)})")
        super().__init__(f"no SSH banner {why}")
        self.timed_out = timeout_s is not None


def banner_received(client: paramiko.SSHClient) -> bool:
    transport = client.get_transport()
    return bool(transport is not None and getattr(transport, "remote_version", ""))


def keys_exchanged(client: paramiko.SSHClient) -> bool:
    """True once the host sent its banner and the key exchange finished (a session id):
    a failure after that is the key's, not the network's."""
    transport = client.get_transport()
    return bool(transport is not None and transport.session_id is not None)


def refusal(self: Any, e: Exception, handshake_done: bool) -> HostRefused | None:
    """The permanent ``HostRefused`` a connect failure of connection ``self`` means (key
    or host key refused), or None when it is transient (worth retrying)."""
    if isinstance(e, paramiko.BadHostKeyException):
        return HostRefused(
            f"{self.name}: host key mismatch for {self.address} "
            f"(got {e.key.get_name()} {e.key.get_fingerprint().hex()[:16]}...)",
            hint=f"the host's key differs from {self.known_hosts or 'known_hosts'}")
    if isinstance(e, paramiko.PasswordRequiredException):
        return HostRefused(f"{self.name}: key file {self.key_file} is encrypted")
    if isinstance(e, paramiko.AuthenticationException):
        return HostRefused(
            f"{self.name}: key {self.key_file} rejected for {self.user}@{self.address} ({e})")
    if isinstance(e, paramiko.SSHException):
        if "not found in known_hosts" in str(e):
            return HostRefused(f"{self.name}: host key of {self.address} is not in "
                             f"{self.known_hosts or 'known_hosts'}")
        if handshake_done:  # failed while authenticating: not transient
            return HostRefused(
                f"{self.name}: cannot authenticate with key {self.key_file}: {e}")
    if isinstance(e, ValueError):  # unparsable key file
        return HostRefused(f"{self.name}: cannot use key file {self.key_file}: {e}")
    return None
