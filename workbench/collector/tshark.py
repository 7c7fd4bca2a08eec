"""tshark outputs (pure): ``-z rpc,srt,...``, ``-z io,stat,...`` and ``-T fields`` RTT lines.

One ``tshark -r`` pass may print all three (fields first, then each statistics block), so each
parser picks its own block out of the text.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from workbench.errors import ParseError


@dataclass(frozen=True)
class SrtRow:
    """One RPC procedure in ``rpc,srt``: calls and service response times (seconds)."""

    procedure: str
    calls: int
    min_s: float
    max_s: float
    avg_s: float
    sum_s: float


@dataclass(frozen=True)
class IoInterval:
    """One row of ``io,stat``: frames and bytes per column (one column per filter)."""

    start_s: float
    end_s: float
    frames: tuple[int, ...]
    bytes: tuple[int, ...]


_SRT_ROW = re.compile(
    r"^\s*(\d+)\s+(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
_IO_ROW = re.compile(r"^\|\s*([\d.]+)\s*<>\s*(?:([\d.]+)|Dur)\s*\|(.*)\|\s*$")


def parse_rpc_srt(text: str, source: str = "<tshark rpc,srt>") -> dict[str, SrtRow]:
    """Procedures of the ``RPC SRT Statistics`` block ({} when the trace held no RPC calls)."""
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith("RPC SRT Statistics"))
    except StopIteration:
        raise ParseError(source, None, "no 'RPC SRT Statistics' block") from None
    rows: dict[str, SrtRow] = {}
    for i in range(start + 1, len(lines)):
        ln = lines[i]
        if ln.startswith("=") or not ln.strip():
            break
        if ln.startswith(("Filter:", "Index", "Program:", "Version:")):
            continue
        m = _SRT_ROW.match(ln)
        if not m:
            raise ParseError(source, i + 1, f"unexpected rpc,srt row {ln.strip()!r}")
        rows[m[2]] = SrtRow(m[2], int(m[3]), *(float(m[k]) for k in (4, 5, 6, 7)))
    return rows


def parse_io_stat(text: str, source: str = "<tshark io,stat>") -> list[IoInterval]:
    """Rows of the ``IO Statistics`` block; each has (frames, bytes) per filter column.
    An empty capture gives a block without rows: ``[]``."""
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if "IO Statistics" in ln)
    except StopIteration:
        raise ParseError(source, None, "no 'IO Statistics' block") from None
    out: list[IoInterval] = []
    for i in range(start + 1, len(lines)):
        ln = lines[i]
        if ln.startswith("="):
            break
        m = _IO_ROW.match(ln)
        if not m:
            continue
        cells = [c.strip() for c in m[3].replace("|", " ").split()]
        if len(cells) % 2:
            raise ParseError(source, i + 1, f"odd number of io,stat cells in {ln.strip()!r}")
        try:
            nums = [int(c) for c in cells]
        except ValueError:
            raise ParseError(source, i + 1, f"non-integer io,stat cell in {ln.strip()!r}") from None
        end = float(m[2]) if m[2] else float("nan")
        out.append(IoInterval(float(m[1]), end, tuple(nums[0::2]), tuple(nums[1::2])))
    return out


@dataclass(frozen=True)
class RttSummary:
    """TCP ACK round-trip times (seconds) seen from one sender."""

    count: int
    min_s: float
    median_s: float
    mean_s: float


def parse_ack_rtt(text: str, source: str = "<tshark fields>") -> dict[str, RttSummary]:
    """Lines ``ip.src<TAB>tcp.srcport<TAB>tcp.analysis.ack_rtt`` -> RTT summary per
    ``ip:port`` of the ACKing side. Statistics blocks in the same text are skipped."""
    per: dict[str, list[float]] = {}
    for i, ln in enumerate(text.splitlines(), 1):
        if "\t" not in ln:
            continue
        parts = ln.split("\t")
        if len(parts) != 3:
            raise ParseError(source, i, f"expected 3 tab-separated fields, got {len(parts)}")
        if not parts[2]:
            continue
        try:
            rtt = float(parts[2].split(",")[0])
        except ValueError:
            raise ParseError(source, i, f"ack_rtt is not a number: {parts[2]!r}") from None
        per.setdefault(f"{parts[0]}:{parts[1]}", []).append(rtt)
    return {k: RttSummary(len(v), min(v), statistics.median(v), statistics.fmean(v))
            for k, v in per.items()}


def rtt_from(summaries: Mapping[str, RttSummary], address: str) -> RttSummary | None:
    """Pool the RTT summaries of every port of ``address`` (None when it sent no ACKs)."""
    rows = [s for k, s in summaries.items() if k.rsplit(":", 1)[0] == address]
    if not rows:
        return None
    n = sum(r.count for r in rows)
    mean = sum(r.mean_s * r.count for r in rows) / n
    median = max(rows, key=lambda r: r.count).median_s
    return RttSummary(n, min(r.min_s for r in rows), median, mean)
