"""Per-run monitors (Algorithm 2 step 3): started just before G and stopped just after it.

* data-path byte counters (sysfs) on the compute host, before/after: D;
* sysstat ``sadc`` on the compute and storage hosts: CPU, memory, disk, net-dev (whole host);
* ``dumpcap`` on the compute host's data interface (and the storage host's for NFS): io,stat
  per direction, TCP ACK RTT, NFS ``rpc,srt`` per-op times.

The run's own CPU time comes from its cgroup (``workbench.emulation``), not from here. sar and
the capture are best-effort: a failure there is reported in ``MonitorReport.errors``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from workbench.collector.net import IfaceCounters
from workbench.collector.sar import SarSummary
from workbench.monitors.capture import CaptureResult, PacketCapture
from workbench.monitors.counters import read_counters
from workbench.monitors.sysstat import SarMonitor, find_sadc
from workbench.remote import Connection

__all__ = ["CaptureResult", "Endpoint", "MonitorReport", "PacketCapture", "RunMonitors",
           "SarMonitor", "find_sadc", "read_counters"]


@dataclass(frozen=True)
class Endpoint:
    """One host's side of the data path for monitoring."""

    conn: Connection
    iface: str
    address: str
    files: str  # a directory of this host for the monitors' files (created and removed here)


@dataclass
class MonitorReport:
    """What the monitors measured during one run."""

    data: IfaceCounters | None = None
    sar_compute: SarSummary | None = None
    sar_storage: SarSummary | None = None
    capture_compute: CaptureResult | None = None
    capture_storage: CaptureResult | None = None
    start_s: float = 0.0
    stop_s: float = 0.0
    analysis_s: float = 0.0
    errors: list[str] = field(default_factory=list)


def _parallel(tasks: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run the callables concurrently; value or exception per key."""
    out: dict[str, Any] = {}
    if not tasks:
        return out
    with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
        futures = {k: pool.submit(fn) for k, fn in tasks.items()}
    for k, f in futures.items():
        exc = f.exception()
        out[k] = exc if exc is not None else f.result()
    return out


class RunMonitors:
    """The monitors of one run; ``start()``, then ``stop() -> MonitorReport``; ``cleanup()``
    always (idempotent) removes processes and files."""

    def __init__(self, compute: Endpoint, storage: Endpoint, *, sar: bool = True,
                 sar_interval_s: int = 1, tshark: bool = True, nfs_version: int | None = None,
                 sadc: dict[str, str | None] | None = None, max_s: float = 3600.0) -> None:
        """``max_s`` bounds how long sadc/dumpcap run if nobody stops them (e.g. the
        controller died): they stop by themselves."""
        self.compute = compute
        self.storage = storage
        sadc = sadc or {}
        self.sar: dict[str, SarMonitor] = {}
        if sar:
            for role, ep in (("compute", compute), ("storage", storage)):
                path = sadc.get(ep.conn.name)
                if path:
                    self.sar[role] = SarMonitor(ep.conn, path, f"{ep.files}/{role}.sa",
                                                sar_interval_s, max_s)
        self.captures: dict[str, PacketCapture] = {}
        if tshark:
            self.captures["compute"] = PacketCapture(
                compute.conn, compute.iface, compute.address, storage.address,
                f"{compute.files}/compute.pcapng", nfs_version, max_s)
            if nfs_version:
                self.captures["storage"] = PacketCapture(
                    storage.conn, storage.iface, storage.address, compute.address,
                    f"{storage.files}/storage.pcapng", nfs_version, max_s)
        self._before: IfaceCounters | None = None
        self.report = MonitorReport()

    def start(self) -> None:
        """Start everything (in parallel); raises only if the data counters are unreadable."""
        t0 = time.monotonic()
        _parallel({ep.files: (lambda ep=ep: ep.conn.run(["mkdir", "-p", ep.files], timeout=30))
                   for ep in (self.compute, self.storage)})
        tasks: dict[str, Callable[[], Any]] = {
            "counters": lambda: read_counters(self.compute.conn, self.compute.iface)}
        for role, m in self.sar.items():
            tasks[f"sar_{role}"] = m.start
        for role, c in self.captures.items():
            tasks[f"capture_{role}"] = c.start
        got = _parallel(tasks)
        for key, value in got.items():
            if isinstance(value, BaseException):
                if key == "counters":
                    raise value
                self.report.errors.append(f"{key} start: {value}")
                self._drop(key)
        self._before = got["counters"]
        self.report.start_s = time.monotonic() - t0

    def _drop(self, key: str) -> None:
        kind, _, role = key.partition("_")
        holder: dict[str, Any] = self.sar if kind == "sar" else self.captures
        obj = holder.pop(role, None)
        if obj is not None:
            with contextlib.suppress(Exception):
                obj.cleanup()

    def halt(self) -> None:
        """Right after G: read the data counters and stop sadc/dumpcap (fast, in parallel)."""
        t0 = time.monotonic()
        tasks: dict[str, Callable[[], Any]] = {
            "counters": lambda: read_counters(self.compute.conn, self.compute.iface)}
        for role, m in self.sar.items():
            tasks[f"sar_{role}"] = m.halt
        for role, c in self.captures.items():
            tasks[f"capture_{role}"] = c.halt
        got = _parallel(tasks)
        after = got.pop("counters")
        if isinstance(after, BaseException):
            raise after
        if self._before is not None:
            self.report.data = after - self._before
        for key, value in got.items():
            if isinstance(value, BaseException):
                self.report.errors.append(f"{key} stop: {value}")
                self._drop(key)
        self.report.stop_s = time.monotonic() - t0

    def analyse(self) -> MonitorReport:
        """Summarise what sadc and dumpcap recorded (sadf, tshark; slow part, in parallel).
        May run while the emulation is being torn down."""
        t0 = time.monotonic()
        tasks: dict[str, Callable[[], Any]] = {}
        for role, m in self.sar.items():
            tasks[f"sar_{role}"] = m.stop
        for role, c in self.captures.items():
            tasks[f"capture_{role}"] = c.stop
        for key, value in _parallel(tasks).items():
            if isinstance(value, BaseException):
                self.report.errors.append(f"{key} analysis: {value}")
            else:
                setattr(self.report, key, value)
        self.report.analysis_s = time.monotonic() - t0
        return self.report

    def stop(self) -> MonitorReport:
        """``halt()`` then ``analyse()``."""
        self.halt()
        return self.analyse()

    def cleanup(self) -> None:
        """Kill leftover monitor processes and delete their files on every host."""
        tasks: dict[str, Callable[[], Any]] = {}
        for role, m in self.sar.items():
            tasks[f"sar_{role}"] = m.cleanup
        for role, c in self.captures.items():
            tasks[f"capture_{role}"] = c.cleanup
        _parallel(tasks)
        _parallel({ep.files: (lambda ep=ep: ep.conn.run(["rm", "-rf", "--", ep.files],
                                                        check=False, timeout=30))
                   for ep in (self.compute, self.storage)})
