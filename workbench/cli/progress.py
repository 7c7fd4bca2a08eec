"""The live convergence log a campaign prints: one line per told run, the runs in flight on
a transient terminal line, and a summary when it stops."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from nimo.campaign import CampaignResult, Observer
from nimo.records import IterationRecord, RunOutcome, RunRequest


class ProgressTable(Observer):
    """Prints one line per told run: the live convergence log. On a terminal, the runs in
    flight are shown on a transient line that the next log line replaces."""

    HEADER = (
        f"{'run':>4}  {'purpose':<9} {'predictor':<12} {'learning':>9}  {'internal':>8}  "
        f"{'external':>8}  assignment"
    )

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.lines = 0
        self._transient = False

    def _out(self) -> TextIO:
        return self.stream or sys.stderr

    def _header(self, out: TextIO) -> None:
        if self.lines == 0:
            print(self.HEADER, file=out)
        self.lines += 1

    def _clear(self, out: TextIO) -> None:
        if self._transient:
            print("\r\033[K", end="", file=out)
            self._transient = False

    def asked(self, requests: Sequence[RunRequest]) -> None:
        out = self._out()
        if not requests or not getattr(out, "isatty", lambda: False)():
            return
        self._header(out)
        self._clear(out)
        first = requests[0]
        what = " ".join(f"{k}={v:g}" for k, v in first.assignment.items())
        more = f" (+{len(requests) - 1} more)" if len(requests) > 1 else ""
        started = time.strftime("%H:%M:%S")
        print(f"{first.run:>4}  running since {started}: {what}{more}"[:160], end="",
              file=out, flush=True)
        self._transient = True

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        out = self._out()
        self._clear(out)
        self._header(out)
        status = "" if outcome.ok else f"  FAILED: {outcome.reason}"
        print(format_record(record) + status, file=out, flush=True)

    def finished(self, result: CampaignResult) -> None:
        out = self._out()
        self._clear(out)
        print(f"stopped: {result.stopped_because or '-'}; runs {len(result.iterations)}; "
              f"learning time {format_duration(result.acquisition_s)}; external MAPE "
              f"{format_pct(result.external_mape_pct)}", file=out, flush=True)


def format_record(r: IterationRecord) -> str:
    """One convergence-log line; a screening run shows as purpose ``screen`` with the
    attribute it varies in the predictor column."""
    assignment = " ".join(f"{k}={v:g}" for k, v in r.assignment.items())
    purpose, predictor = r.purpose, r.predictor or "-"
    if predictor.startswith("screen:"):
        purpose, predictor = "screen", predictor.partition(":")[2]
    if len(predictor) > 12:
        predictor = predictor[:11] + "~"
    return (
        f"{r.run:>4}  {purpose:<9} {predictor:<12} "
        f"{format_duration(r.acquisition_s):>9}  {format_pct(r.internal_error_pct):>8}  "
        f"{format_pct(r.external_mape_pct):>8}  {assignment}"
    )


def format_duration(seconds: float) -> str:
    """Seconds as ``42s``, ``1.5m`` or ``2.00h``."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.2f}h"


def format_pct(v: float | None) -> str:
    """A percentage with one decimal, or ``-``."""
    return "-" if v is None else f"{v:.1f}%"
