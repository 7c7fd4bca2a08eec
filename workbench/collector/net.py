"""Network byte counters (pure): /sys/class/net/IF/statistics snapshots."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import ParseError

SYSFS_COUNTERS = ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets")


@dataclass(frozen=True)
class IfaceCounters:
    """Bytes and packets received and sent on one interface."""

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
