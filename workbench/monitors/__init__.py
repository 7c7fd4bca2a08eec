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
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from workbench.collector.net import IfaceCounters
from workbench.collector.sar import SarSummary
from workbench.monitors.capture import CaptureResult, PacketCapture
from workbench.monitors.counters import read_counters
from workbench.monitors.sysstat import SarMonitor, find_sadc
from workbench.remote import Connection
from workbench.remote.group import run_parallel

__all__ = ["CaptureResult", "Endpoint", "MonitorReport", "PacketCapture", "RunMonitors",
           "SarMonitor", "find_sadc", "read_counters"]


@dataclass(frozen=True)
class Endpoint:
    """One host's side of the data path for monitoring."""

    conn: Connection
    iface: str
    address: str
    # a private directory of this host for the monitors' files (made by the caller with
    # ``hostobjects.private_dir``, so `nimo clean` ends sadc/dumpcap writing there; removed here)
    files: str


@dataclass
class MonitorReport:
    """What the monitors measured during one run."""

    data: IfaceCounters | None = None
    sar_compute: SarSummary | None = None
    sar_storage: SarSummary | None = None
    capture_compute: CaptureResult | None = None
    capture_storage: CaptureResult | None = None
    analysis_s: float = 0.0
    errors: list[str] = field(default_factory=list)


class RunMonitors:
    """The monitors of one run: ``start()`` before G, ``halt()`` right after it, then
    ``analyse() -> MonitorReport``; ``cleanup()`` always (idempotent) removes processes and
    files."""

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

    def _steps(self, step: str) -> dict[str, Callable[[], Any]]:
        """The bound method ``step`` of every sar monitor and capture, keyed
        ``sar_<role>``/``capture_<role>``."""
        tasks: dict[str, Callable[[], Any]] = {}
        for kind, monitors in (("sar", self.sar), ("capture", self.captures)):
            for role, monitor in monitors.items():
                tasks[f"{kind}_{role}"] = getattr(monitor, step)
        return tasks

    def _on_hosts(self, argv: Callable[[Endpoint], list[str]]) -> None:
        """Run ``argv(endpoint)`` on both hosts concurrently; failures are ignored."""
        run_parallel({ep.files: partial(ep.conn.run, argv(ep), check=False, timeout=30)
                      for ep in (self.compute, self.storage)})

    def _counters(self) -> IfaceCounters:
        return read_counters(self.compute.conn, self.compute.iface)

    def start(self) -> None:
        """Start everything (in parallel); raises only if the data counters are unreadable."""
        got = run_parallel({"counters": self._counters, **self._steps("start")})
        for key, value in got.items():
            if isinstance(value, BaseException):
                if key == "counters":
                    raise value
                self.report.errors.append(f"{key} start: {value}")
                self._drop(key)
        self._before = got["counters"]  # type: ignore[assignment]

    def _drop(self, key: str) -> None:
        kind, _, role = key.partition("_")
        holder: dict[str, Any] = self.sar if kind == "sar" else self.captures
        obj = holder.pop(role, None)
        if obj is not None:
            with contextlib.suppress(Exception):
                obj.cleanup()

    def halt(self) -> None:
        """Right after G: read the data counters and stop sadc/dumpcap (fast, in parallel)."""
        got = run_parallel({"counters": self._counters, **self._steps("halt")})
        after = got.pop("counters")
        if isinstance(after, BaseException):
            raise after
        if self._before is not None:
            self.report.data = after - self._before
        for key, value in got.items():
            if isinstance(value, BaseException):
                self.report.errors.append(f"{key} stop: {value}")
                self._drop(key)

    def analyse(self) -> MonitorReport:
        """Summarise what sadc and dumpcap recorded (sadf, tshark; slow part, in parallel).
        May run while the emulation is being torn down."""
        t0 = time.monotonic()
        for key, value in run_parallel(self._steps("stop")).items():
            if isinstance(value, BaseException):
                self.report.errors.append(f"{key} analysis: {value}")
            else:
                setattr(self.report, key, value)
        self.report.analysis_s = time.monotonic() - t0
        return self.report

    def cleanup(self) -> None:
        """Kill leftover monitor processes and delete their files on every host."""
        run_parallel(self._steps("cleanup"))
        self._on_hosts(lambda ep: ["rm", "-rf", "--", ep.files])
