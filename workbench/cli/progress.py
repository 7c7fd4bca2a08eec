"""The live convergence log a campaign prints: one line per told run, a transient status
line on a terminal (runs out of the budget, elapsed, learning time, error, ETA, runs in
flight), and a summary when it stops."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from nimo.campaign import CampaignResult, Observer
from nimo.records import IterationRecord, RunOutcome, RunRequest
from workbench.replay_categories import Categories, named, shown


class ProgressTable(Observer):
    """Prints one line per told run: the live convergence log (the same lines on a terminal
    and in a file). On a terminal, a transient status line under the log shows the runs done
    out of the budget, elapsed time, learning time, current error, ETA and the runs in
    flight; the next log line replaces it. ``budget`` is the design's ``stop.max_runs``
    (``for_design``); without one the status shows the count alone and no ETA."""

    HEADER = (
        f"{'run':>4}  {'purpose':<9} {'predictor':<12} {'learning':>9}  {'internal':>8}  "
        f"{'external':>8}  assignment"
    )

    def __init__(self, stream: TextIO | None = None, budget: int | None = None,
                 categories: Categories | None = None) -> None:
        self.stream = stream
        self.budget = budget
        self.categories = categories or {}  # categorical attributes' names, by level
        self.lines = 0
        self.done = 0
        self.learning_s = 0.0
        self.error_pct: float | None = None
        self.in_flight: dict[int, tuple[RunRequest, float]] = {}
        self.started: float | None = None
        self._transient = False

    @classmethod
    def for_design(cls, design: Any, stream: TextIO | None = None,
                   categories: Categories | None = None) -> ProgressTable:
        """A table whose budget is ``design``'s ``stop.max_runs`` (a spec or a mapping)."""
        stop = design.get("stop") if isinstance(design, Mapping) else getattr(design, "stop",
                                                                               None)
        budget = stop.get("max_runs") if isinstance(stop, Mapping) else getattr(
            stop, "max_runs", None)
        return cls(stream, budget=int(budget) if budget else None, categories=categories)

    def _out(self) -> TextIO:
        return self.stream or sys.stderr

    def _tty(self) -> bool:
        return bool(getattr(self._out(), "isatty", lambda: False)())

    def _header(self, out: TextIO) -> None:
        if self.lines == 0:
            print(self.HEADER, file=out)
        self.lines += 1

    def _clear(self, out: TextIO) -> None:
        if self._transient:
            print("\r\033[K", end="", file=out)
            self._transient = False

    def asked(self, requests: Sequence[RunRequest]) -> None:
        now = time.monotonic()
        self.started = self.started if self.started is not None else now
        for r in requests:
            self.in_flight[r.run] = (r, now)
        if requests and self._tty():
            self._header(self._out())
            self._status()

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        out = self._out()
        self.in_flight.pop(outcome.request.run, None)
        self.done += 1
        self.learning_s = record.acquisition_s
        if record.internal_error_pct is not None:
            self.error_pct = record.internal_error_pct
        self._clear(out)
        self._header(out)
        status = "" if outcome.ok else f"  FAILED: {outcome.reason}"
        print(format_record(record, self.categories) + status, file=out, flush=True)
        if self.in_flight and self._tty():
            self._status()

    def _status(self) -> None:
        """The transient status line (terminals only)."""
        out = self._out()
        self._clear(out)
        width = shutil.get_terminal_size((160, 24)).columns - 1
        print(self.status_text()[:max(width, 40)], end="", file=out, flush=True)
        self._transient = True

    def status_text(self, now: float | None = None) -> str:
        """``7/20 runs  elapsed 0:42  learning 1.2h  error 8.1%  ETA 1:10  in flight 2: run 8
        running since 12:01:02: cpu=0.5 ... (+1 more)``."""
        now = time.monotonic() if now is None else now
        elapsed = now - (self.started if self.started is not None else now)
        parts = [f"{self.done}/{self.budget} runs" if self.budget else f"{self.done} runs",
                 f"elapsed {format_clock(elapsed)}", f"learning {format_duration(self.learning_s)}",
                 f"error {format_pct(self.error_pct)}"]
        if self.budget and self.done:
            left = max(self.budget - self.done, 0)
            parts.append(f"ETA {format_clock(elapsed / self.done * left)}")
        if self.in_flight:
            first, since = min(self.in_flight.values(), key=lambda v: v[0].run)
            what = " ".join(f"{k}={shown(v)}"
                            for k, v in named(first.assignment, self.categories).items())
            more = f" (+{len(self.in_flight) - 1} more)" if len(self.in_flight) > 1 else ""
            clock = time.strftime("%H:%M:%S", time.localtime(time.time() - (now - since)))
            parts.append(f"in flight {len(self.in_flight)}: run {first.run} running since "
                         f"{clock}: {what}{more}")
        return "  ".join(parts)

    def finished(self, result: CampaignResult) -> None:
        out = self._out()
        self._clear(out)
        print(f"stopped: {result.stopped_because or '-'}; runs {len(result.iterations)}; "
              f"learning time {format_duration(result.acquisition_s)}; external MAPE "
              f"{format_pct(result.external_mape_pct)}", file=out, flush=True)

    def aborted(self, error: BaseException) -> None:
        self._clear(self._out())


def format_record(r: IterationRecord, categories: Categories | None = None) -> str:
    """One convergence-log line; a screening run shows as purpose ``screen`` with the
    attribute it varies in the predictor column; categorical levels by name."""
    assignment = " ".join(f"{k}={shown(v)}"
                          for k, v in named(r.assignment, categories or {}).items())
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
    """Seconds as ``42s``, ``1.5m``, ``2.00h``, or ``3.1e+07h`` beyond a million hours."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    return f"{_hours(seconds)}h"


def format_hours(seconds: float) -> str:
    """Seconds as hours, ``7.30 h`` (``3.1e+07 h`` beyond a million hours)."""
    return f"{_hours(seconds)} h"


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.2f}" if hours < 1e6 else f"{hours:.2g}"


def format_pct(v: float | None) -> str:
    """A percentage with one decimal, or ``-``."""
    return "-" if v is None else f"{v:.1f}%"


def format_clock(seconds: float) -> str:
    """Wall time as ``m:ss`` or ``h:mm:ss``."""
    s = int(round(max(seconds, 0.0)))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
