"""Interface byte/packet counters from /sys/class/net/IF/statistics (one cheap command)."""

from __future__ import annotations

from workbench.collector.net import SYSFS_COUNTERS, IfaceCounters, parse_sysfs_counters
from workbench.remote import Connection


def read_counters(conn: Connection, iface: str) -> IfaceCounters:
    """rx/tx bytes and packets of ``iface`` on the host now."""
    files = [f"/sys/class/net/{iface}/statistics/{c}" for c in SYSFS_COUNTERS]
    r = conn.run(["cat", *files], timeout=10)
    return parse_sysfs_counters(r.stdout, f"{conn.name}:/sys/class/net/{iface}/statistics")
