"""sysstat: ``sadf -j FILE -- -u -n DEV -d -r`` JSON -> a per-host summary (pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import ParseError


@dataclass(frozen=True)
class DiskSummary:
    """One block device over the run: mean tps/await/util and kB moved."""

    tps: float
    await_ms: float
    util_pct: float
    read_kb: float
    write_kb: float


@dataclass(frozen=True)
class SarSummary:
    """What sadc saw on one host during a run (whole-machine figures)."""

    host: str
    ncpu: int
    samples: int
    interval_s: float
    cpu_busy_pct: float
    cpu_iowait_pct: float
    mem_avail_min_kb: float | None
    net_kb: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # iface: rx, tx
    disks: Mapping[str, DiskSummary] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host, "ncpu": self.ncpu, "samples": self.samples,
            "cpu_busy_pct": round(self.cpu_busy_pct, 2),
            "cpu_iowait_pct": round(self.cpu_iowait_pct, 2),
            "mem_avail_min_kb": self.mem_avail_min_kb,
            "net_kb": {k: [round(v[0], 1), round(v[1], 1)] for k, v in self.net_kb.items()},
            "disks": {k: {"tps": round(d.tps, 2), "await_ms": round(d.await_ms, 3),
                          "util_pct": round(d.util_pct, 2), "read_kb": round(d.read_kb, 1),
                          "write_kb": round(d.write_kb, 1)} for k, d in self.disks.items()},
        }


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def parse_sadf_json(text: str, source: str = "<sadf>") -> SarSummary:
    """Summarise sadf JSON; a run shorter than one interval gives ``samples == 0``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParseError(source, e.lineno, f"not sadf JSON: {e.msg}") from None
    try:
        host = doc["sysstat"]["hosts"][0]
        stats = host.get("statistics", [])
        return _summarise(host, [s for s in stats if "timestamp" in s])
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ParseError(source, None, f"unexpected sadf JSON layout ({e!r})") from None


def _summarise(host: Mapping[str, Any], stats: list[Mapping[str, Any]]) -> SarSummary:
    busy, iowait, avail = [], [], []
    net: dict[str, list[float]] = {}
    disks: dict[str, list[list[float]]] = {}
    interval = float(stats[0]["timestamp"].get("interval", 1)) if stats else 1.0
    for s in stats:
        dt = float(s["timestamp"].get("interval", interval))
        for c in s.get("cpu-load", []):
            if c.get("cpu") == "all":
                busy.append(100.0 - float(c["idle"]))
                iowait.append(float(c.get("iowait", 0.0)))
        mem = s.get("memory")
        if mem and "avail" in mem:
            avail.append(float(mem["avail"]))
        for n in s.get("network", {}).get("net-dev", []):
            acc = net.setdefault(n["iface"], [0.0, 0.0])
            acc[0] += float(n["rxkB"]) * dt
            acc[1] += float(n["txkB"]) * dt
        for d in s.get("disk", []):
            disks.setdefault(d["disk-device"], []).append(
                [float(d["tps"]), float(d["await"]), float(d["util-percent"]),
                 float(d.get("rkB", 0.0)) * dt, float(d.get("wkB", 0.0)) * dt])
    return SarSummary(
        host=str(host.get("nodename", "?")),
        ncpu=int(host.get("number-of-cpus", 1)),
        samples=len(stats),
        interval_s=interval,
        cpu_busy_pct=_mean(busy),
        cpu_iowait_pct=_mean(iowait),
        mem_avail_min_kb=min(avail) if avail else None,
        net_kb={k: (v[0], v[1]) for k, v in net.items()},
        disks={k: _disk(rows) for k, rows in disks.items()},
    )


def _disk(rows: list[list[float]]) -> DiskSummary:
    tps = [r[0] for r in rows]
    total_ios = sum(tps)
    # await weighted by I/O count: the mean time of one I/O over the run
    await_ms = sum(r[0] * r[1] for r in rows) / total_ios if total_ios else 0.0
    return DiskSummary(tps=_mean(tps), await_ms=await_ms, util_pct=_mean([r[2] for r in rows]),
                       read_kb=sum(r[3] for r in rows), write_kb=sum(r[4] for r in rows))
