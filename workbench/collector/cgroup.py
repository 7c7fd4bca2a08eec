"""cgroup accounting files -> CPU seconds and throttling (pure; v1 and v2)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import ParseError


@dataclass(frozen=True)
class CpuAccounting:
    """CPU used by a cgroup: seconds, and how often the CFS quota throttled it."""

    cpu_s: float | None
    nr_periods: int
    nr_throttled: int
    throttled_s: float


def parse_kv(text: str, source: str) -> dict[str, int]:
    """``key value`` lines (cpu.stat, cpuacct.stat, memory.stat) -> dict of ints."""
    out: dict[str, int] = {}
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ParseError(source, i, f"expected 'key value', got {line.strip()!r}")
        try:
            out[parts[0]] = int(parts[1])
        except ValueError:
            raise ParseError(source, i, f"value of {parts[0]} is not an integer") from None
    return out


def parse_cpu_stat(text: str, source: str = "<cpu.stat>") -> CpuAccounting:
    """cgroup v2 ``cpu.stat`` (usage_usec, throttled_usec) or v1 ``cpu.stat`` (throttled_time
    in ns; no usage: combine with :func:`parse_cpuacct_usage`)."""
    kv = parse_kv(text, source)
    if "usage_usec" in kv:
        return CpuAccounting(kv["usage_usec"] / 1e6, kv.get("nr_periods", 0),
                             kv.get("nr_throttled", 0), kv.get("throttled_usec", 0) / 1e6)
    if "throttled_time" in kv or "nr_periods" in kv:
        return CpuAccounting(None, kv.get("nr_periods", 0), kv.get("nr_throttled", 0),
                             kv.get("throttled_time", 0) / 1e9)
    raise ParseError(source, None, "neither usage_usec (v2) nor throttled_time (v1) present")


def parse_cpuacct_usage(text: str, source: str = "<cpuacct.usage>") -> float:
    """cgroup v1 ``cpuacct.usage`` (nanoseconds) -> seconds."""
    s = text.strip()
    if not s.isdigit():
        raise ParseError(source, 1, f"expected nanoseconds, got {s[:40]!r}")
    return int(s) / 1e9
