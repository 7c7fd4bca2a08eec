"""Network byte counters (pure): /proc/net/dev and /sys/class/net/IF/statistics snapshots."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.errors import ParseError

SYSFS_COUNTERS = ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets")


@dataclass(frozen=True)
class IfaceCounters:
    rx_bytes: int
    tx_bytes: int
    rx_packets: int
    tx_packets: int

    def __sub__(self, before: IfaceCounters) -> IfaceCounters:
        return IfaceCounters(self.rx_bytes - before.rx_bytes, self.tx_bytes - before.tx_bytes,
                             self.rx_packets - before.rx_packets,
                             self.tx_packets - before.tx_packets)

    @property
    def total_bytes(self) -> int:
        return self.rx_bytes + self.tx_bytes


def parse_proc_net_dev(text: str, source: str = "/proc/net/dev") -> dict[str, IfaceCounters]:
    """Every interface of a /proc/net/dev dump."""
    out: dict[str, IfaceCounters] = {}
    lines = text.splitlines()
    if len(lines) < 2 or "|" not in lines[0]:
        raise ParseError(source, 1, "not a /proc/net/dev header")
    for i, line in enumerate(lines[2:], 3):
        if not line.strip():
            continue
        name, sep, rest = line.partition(":")
        f = rest.split()
        if not sep or len(f) < 16:
            raise ParseError(source, i, f"expected 'iface: 16 counters', got {line.strip()!r}")
        try:
            out[name.strip()] = IfaceCounters(int(f[0]), int(f[8]), int(f[1]), int(f[9]))
        except ValueError:
            raise ParseError(source, i, "non-integer counter") from None
    return out


def parse_sysfs_counters(text: str, source: str = "<statistics>") -> IfaceCounters:
    """Output of ``cat /sys/class/net/IF/statistics/{rx_bytes,tx_bytes,rx_packets,tx_packets}``
    (one integer per line, in :data:`SYSFS_COUNTERS` order)."""
    vals = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(vals) != len(SYSFS_COUNTERS):
        raise ParseError(source, None, f"expected {len(SYSFS_COUNTERS)} counters, got {len(vals)}")
    for i, v in enumerate(vals, 1):
        if not v.isdigit():
            raise ParseError(source, i, f"{SYSFS_COUNTERS[i - 1]} is not an integer: {v!r}")
    return IfaceCounters(*(int(v) for v in vals))


def delta(after: Mapping[str, IfaceCounters], before: Mapping[str, IfaceCounters],
          iface: str) -> IfaceCounters:
    """Counter difference of one interface between two /proc/net/dev snapshots."""
    if iface not in after or iface not in before:
        raise ParseError("/proc/net/dev", None, f"no interface {iface!r}")
    return after[iface] - before[iface]
