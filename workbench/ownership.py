"""This process as an owner in the campaign store: one owner per campaign, host leases, and a
heartbeat that keeps both alive.

A ``Presence`` registers the process (``host``: ``$NIMO_HOSTNAME`` or the machine's name;
its pid; a unique id) and renews its heartbeat every ``$NIMO_HEARTBEAT_S`` seconds (default
2) from a daemon thread. Another process treats it as dead once the heartbeat is older than
``$NIMO_STALE_S`` seconds (default 30): its campaign claims and host leases are then reaped.
Liveness is judged by the heartbeat, so processes on different machines sharing one store
agree; the one shortcut is an owner on this very kernel and pid namespace (its id carries a
token of both) whose pid is gone: it is dead now, without waiting for its heartbeat to age.
A process that finds its own row reaped (it stalled longer than the stale time) has lost its
campaigns: ``on_lost`` runs (default: interrupt the main thread, which tears down
like Ctrl-C).
"""

from __future__ import annotations

import _thread
import functools
import hashlib
import logging
import os
import socket
import sys
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from nimo.errors import StoreError
from nimo.store import Store
from nimo.store.types import Owner
from workbench.processes import pid_alive

log = logging.getLogger("nimo.ownership")
HOSTNAME_ENV = "NIMO_HOSTNAME"
HEARTBEAT_ENV = "NIMO_HEARTBEAT_S"
STALE_ENV = "NIMO_STALE_S"


class Busy(StoreError):
    """Raised when another live process owns the campaign, or another campaign holds one of
    its hosts: nothing was run (exit ``Exit.BUSY``)."""


def host_name() -> str:
    """The machine name recorded for ownership (``$NIMO_HOSTNAME`` overrides it)."""
    return os.environ.get(HOSTNAME_ENV) or socket.gethostname()


def _seconds(env: str, default: float) -> float:
    raw = os.environ.get(env)
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise StoreError(f"${env}={raw!r} is not a number of seconds") from None
    if not 0 < value < 1e6:
        raise StoreError(f"${env}={raw!r} must be > 0 seconds")
    return value


def heartbeat_s() -> float:
    return _seconds(HEARTBEAT_ENV, 2.0)


def stale_s() -> float:
    """Heartbeat age after which an owner is dead (at least 3 heartbeats)."""
    return max(_seconds(STALE_ENV, 30.0), 3 * heartbeat_s())


def pid_gone_here(owner_id: str) -> bool:
    """True if ``owner_id`` ran on this kernel and pid namespace and its pid is gone."""
    parts = owner_id.rsplit(":", 3)
    if len(parts) != 4 or parts[2] != _machine() or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    return pid != os.getpid() and not pid_alive(pid)


def owner_gone(owner: Owner | None, now: float) -> bool:
    """True when no live process holds a campaign: no owner, a stale heartbeat, or a pid
    gone on this machine (a campaign then still reads ``running`` in the store)."""
    return (owner is None or now - owner.heartbeat_at > stale_s()
            or pid_gone_here(owner.id))


@functools.cache
def _machine() -> str:
    """A token of this kernel boot and pid namespace ("" when unknown): pids compare only
    between owners with the same token."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        pidns = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return "unknown"
    return hashlib.sha256(f"{boot}:{pidns}".encode()).hexdigest()[:10]


def _interrupt_main() -> None:
    print("nimo: this process lost its campaign ownership (its heartbeat went stale); "
          "stopping", file=sys.stderr)
    _thread.interrupt_main()


class Presence:
    """This process in ``store`` while entered (see the module docstring)."""

    def __init__(self, store: Store, on_lost: Callable[[], None] | None = None) -> None:
        self.store = store
        self.on_lost = on_lost or _interrupt_main
        self.owner = Owner(f"{host_name()}:{os.getpid()}:{_machine()}:{uuid.uuid4().hex[:8]}",
                           host_name(), os.getpid())
        self.stale_s = stale_s()
        self._every = heartbeat_s()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def id(self) -> str:
        return self.owner.id

    def __enter__(self) -> Presence:
        self.owner = self.store.register_owner(self.owner)
        self._thread = threading.Thread(target=self._beat, name="nimo-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        try:
            self.store.drop_owner(self.id)
        except StoreError as e:  # the store went away: the heartbeat will go stale instead
            log.warning("could not release ownership: %s", e)

    def _beat(self) -> None:
        while not self._stop.wait(self._every):
            try:
                alive = self.store.heartbeat(self.id)
            except StoreError as e:
                log.warning("heartbeat failed (retrying): %s", e)
                continue
            if not alive and not self._stop.is_set():
                self.on_lost()
                return

    def claim(self, name: str) -> None:
        """Own campaign ``name``, or raise ``Busy`` naming the live owner."""
        holder = self.store.claim_campaign(name, self.id, self.stale_s)
        if holder is not None and self._reap_if_gone(holder.id):
            holder = self.store.claim_campaign(name, self.id, self.stale_s)
        if holder is not None:
            raise Busy(f"campaign {name!r} is run by another process: {holder.describe()}",
                       hint="wait for it to end, or stop that process")

    def lease(self, name: str, hosts: Iterable[str]) -> None:
        """Lease ``hosts`` to campaign ``name``, all or none; ``Busy`` naming the holder."""
        wanted = sorted(set(hosts))
        if self.store.acquire_hosts(name, wanted, self.id, self.stale_s):
            return
        theirs = [lease for lease in self.store.lease_holders(wanted)
                  if (lease.campaign, lease.owner) != (name, self.id)]
        if theirs and all(self._reap_if_gone(lease.owner) for lease in theirs) \
                and self.store.acquire_hosts(name, wanted, self.id, self.stale_s):
            return
        first = theirs[0] if theirs else None
        who = (f"host {first.host} is leased to campaign {first.campaign!r} "
               f"(owner {first.owner})" if first else "its hosts were just leased")
        raise Busy(f"campaign {name!r} cannot start: {who}",
                   hint="hosts are never shared unless the inventory marks them shareable; "
                        "retry when that campaign ends")

    def _reap_if_gone(self, owner_id: str) -> bool:
        """Drop ``owner_id`` if it ran on this kernel and pid namespace and its pid is gone
        (its heartbeat would go stale anyway); True if dropped."""
        if not pid_gone_here(owner_id):
            return False
        self.store.drop_owner(owner_id)
        return True

    def release(self, name: str) -> None:
        """Give up campaign ``name`` and its host leases."""
        self.store.release_hosts(name, self.id)
        self.store.release_campaign(name, self.id)
