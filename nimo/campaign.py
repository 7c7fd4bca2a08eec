"""The campaign loop (Algorithm 1's outer loop): ask -> run_many -> tell -> observers.

A campaign is resumable because the planner is deterministic for its seed and the outcomes it
is told: ``ResumingRunner`` answers the requests already finished from the store, so a resumed
campaign re-tells exactly what the crashed one had learned and runs only what is left.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from nimo import metrics
from nimo.errors import NimoError, StoreError, one_line
from nimo.planner.base import Planner
from nimo.records import IterationRecord, RunOutcome, RunRequest
from nimo.runner import OutcomeCallback, Runner
from nimo.space import ResourceSpace

External = Sequence[tuple[Mapping[str, float], float]]


class Observer:
    """Hooks called by ``Campaign.run``; all are no-ops by default."""

    def asked(self, requests: Sequence[RunRequest]) -> None:
        """A batch is about to run."""

    def outcome(self, outcome: RunOutcome) -> None:
        """A run finished (called before the next experiment starts: commit here)."""

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        """The planner was told ``outcome``; ``record.external_mape_pct`` is filled."""

    def finished(self, result: CampaignResult) -> None:
        """The planner stopped."""

    def aborted(self, error: BaseException) -> None:
        """The loop was left by an exception (Ctrl-C, store or runner error)."""


@dataclass(frozen=True)
class CampaignResult:
    """What a campaign produced; ``to_dict()`` is the ``--json`` document."""

    name: str
    design: Mapping[str, Any]
    iterations: tuple[IterationRecord, ...]
    stopped_because: str | None
    model: Any = None
    all_samples_s: float | None = None
    final_extra: Mapping[str, Any] = field(default_factory=dict)
    failed_streak: tuple[int, ...] = ()  # runs that stopped a broken campaign (run again)

    @property
    def external_mape_pct(self) -> float | None:
        for rec in reversed(self.iterations):
            if rec.external_mape_pct is not None:
                return rec.external_mape_pct
        return None

    @property
    def acquisition_s(self) -> float:
        return self.iterations[-1].acquisition_s if self.iterations else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "design": dict(self.design),
            "iterations": [_iteration_dict(r) for r in self.iterations],
            "stopped_because": self.stopped_because,
            "final": {
                "external_mape_pct": self.external_mape_pct,
                "acquisition_s": self.acquisition_s,
                "all_samples_s": self.all_samples_s,
                "runs": len(self.iterations),
                **dict(self.final_extra),
            },
            "model": self.model.to_dict() if self.model is not None else None,
        }


def _iteration_dict(r: IterationRecord) -> dict[str, Any]:
    d = r.to_dict()
    d["attributes"] = {k: list(v) for k, v in r.attributes.items()}
    return d


def mape_pct(model: Any, cases: External) -> float | None:
    """``nimo.metrics.mape_pct`` of ``model`` on (assignment, measured T) pairs."""
    if model is None or not cases:
        return None
    names = list(getattr(model, "names", ()) or cases[0][0].keys())
    X = np.array([[float(a[n]) for n in names] for a, _ in cases])
    y = np.array([float(T) for _, T in cases])
    return metrics.mape_pct(y, model.predict_many(X))


def interval_coverage(model: Any, cases: External, level: float) -> float | None:
    """Fraction of (assignment, measured T) pairs inside ``model``'s ``level`` interval
    (NaN bounds count as a miss); None for models without intervals."""
    if not hasattr(model, "predict_interval") or not cases:
        return None
    inside = 0
    for assignment, T in cases:
        p = model.predict_interval(assignment, level)
        inside += bool(p.lo <= T <= p.hi)
    return inside / len(cases)


def current_model(planner: Planner) -> Any:
    """The planner's model, or None while it cannot fit one yet."""
    try:
        return planner.model()
    except NimoError:
        return None


class Campaign:
    """Run ``planner`` on ``runner`` until it stops; observers see every step."""

    def __init__(
        self,
        planner: Planner,
        runner: Runner,
        *,
        external: External = (),
        observers: Iterable[Observer] = (),
        name: str = "campaign",
        design: Mapping[str, Any] | None = None,
        all_samples_s: float | None = None,
        max_failed_in_row: int | None = 10,
    ) -> None:
        self.planner = planner
        self.runner = runner
        self.external = [(dict(a), float(T)) for a, T in external]
        self.observers = list(observers)
        self.name = name
        self.design = dict(design or {})
        self.all_samples_s = all_samples_s
        self.records: list[IterationRecord] = []
        self.max_failed_in_row = max_failed_in_row
        self.failed_streak: list[int] = []
        self.stopped_because: str | None = None

    def _notify(self, hook: str, *args: Any) -> None:
        for obs in self.observers:
            getattr(obs, hook)(*args)

    def step(self) -> bool:
        """One ask/run/tell round; False once the planner has nothing more to run, or after
        ``max_failed_in_row`` failed runs in a row (the workbench is broken, not the plan)."""
        if self.stopped_because is not None:
            return False
        batch = self.planner.ask()
        if not batch:
            return False
        self._notify("asked", batch)
        outcomes = self.runner.run_many(batch, on_outcome=lambda o: self._notify("outcome", o))
        for outcome in outcomes:
            record = self.planner.tell(outcome)
            model = current_model(self.planner)
            record = dataclasses.replace(record, external_mape_pct=mape_pct(model, self.external))
            self.records.append(record)
            self._notify("iteration", outcome, record, model)
            self.failed_streak = [] if outcome.ok else [*self.failed_streak, outcome.request.run]
            if self.max_failed_in_row and len(self.failed_streak) >= self.max_failed_in_row:
                self.stopped_because = (f"{len(self.failed_streak)} failed runs in a row "
                                        f"(last: {outcome.reason})")
        return self.stopped_because is None

    def run(self) -> CampaignResult:
        try:
            while self.step():
                pass
        except BaseException as e:
            self._notify("aborted", e)
            raise
        result = self.result()
        self._notify("finished", result)
        return result

    def result(self, **final_extra: Any) -> CampaignResult:
        model = current_model(self.planner)
        if self.external and model is not None:
            # The planner may refit after the last told run (e.g. when it stops); report the
            # accuracy of the model it hands over.
            final_extra.setdefault("external_mape_pct", mape_pct(model, self.external))
        return CampaignResult(
            name=self.name,
            design=self.design,
            iterations=tuple(self.records),
            stopped_because=self.stopped_because or self.planner.stopped_because,
            model=current_model(self.planner),
            all_samples_s=self.all_samples_s,
            final_extra=final_extra,
            failed_streak=tuple(self.failed_streak) if self.stopped_because else (),
        )


class ResumingRunner:
    """Answers requests already finished in a previous life of the campaign; runs the rest.

    ``stored`` maps run numbers to finished outcomes (``SqlStore.outcomes``). A stored run
    whose assignment differs from the request means the planner is not the one that made the
    campaign (design or code changed): that raises ``StoreError`` rather than mixing samples.
    Replayed outcomes are not passed to ``on_outcome`` (they are stored already).
    """

    def __init__(self, stored: Mapping[int, RunOutcome], inner: Runner) -> None:
        self.stored = dict(stored)
        self.inner = inner
        self.replayed: list[int] = []

    @property
    def space(self) -> ResourceSpace:
        return self.inner.space

    def _stored(self, request: RunRequest) -> RunOutcome | None:
        done = self.stored.get(request.run)
        if done is None:
            return None
        if _same(done.request.assignment, request.assignment):
            return _as_requested(done, request)
        raise StoreError(
            f"run {request.run}: the stored assignment {dict(done.request.assignment)} differs "
            f"from the planner's {dict(request.assignment)}",
            hint="the campaign's design, seed or code changed since it was started",
        )

    def run(self, request: RunRequest) -> RunOutcome:
        done = self._stored(request)
        if done is not None:
            self.replayed.append(request.run)
            return done
        return self.inner.run(request)

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        answered = {r.run: self._stored(r) for r in requests}
        fresh = [r for r in requests if answered[r.run] is None]
        ran = iter(self.inner.run_many(fresh, on_outcome) if fresh else [])
        out = []
        for r in requests:
            done = answered[r.run]
            if done is not None:
                self.replayed.append(r.run)
                out.append(done)
            else:
                out.append(next(ran))
        return out

    def close(self) -> None:
        self.inner.close()


def _as_requested(done: RunOutcome, request: RunRequest) -> RunOutcome:
    """The stored outcome under the planner's own request (same values, its key order)."""
    sample = done.sample
    if sample is not None:
        sample = dataclasses.replace(sample, assignment=dict(request.assignment))
    return dataclasses.replace(done, request=request, sample=sample)


def _same(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return set(a) == set(b) and all(math.isclose(float(a[k]), float(b[k])) for k in a)


class RetryingRunner:
    """Runs a failed request again, up to ``attempts`` times in all (the retry policy);
    only the last outcome is reported. Interrupted runs are not retried here."""

    def __init__(self, inner: Runner, attempts: int = 2) -> None:
        if attempts < 1:
            raise ValueError("attempts must be >= 1")
        self.inner = inner
        self.attempts = attempts
        self.retried: list[int] = []

    @property
    def space(self) -> ResourceSpace:
        return self.inner.space

    def run(self, request: RunRequest) -> RunOutcome:
        outcome = self.inner.run(request)
        for _ in range(self.attempts - 1):
            if outcome.ok:
                break
            self.retried.append(request.run)
            outcome = self.inner.run(request)
        return outcome

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        def forward_ok(outcome: RunOutcome) -> None:
            if on_outcome is not None and (outcome.ok or self.attempts == 1):
                on_outcome(outcome)

        first = self.inner.run_many(requests, forward_ok)
        out = []
        for request, outcome in zip(requests, first, strict=True):
            if not outcome.ok and self.attempts > 1:
                outcome = self._retry(request)
                if on_outcome is not None:
                    on_outcome(outcome)
            out.append(outcome)
        return out

    def _retry(self, request: RunRequest) -> RunOutcome:
        outcome = None
        for _ in range(self.attempts - 1):
            self.retried.append(request.run)
            outcome = self.inner.run(request)
            if outcome.ok:
                break
        assert outcome is not None
        return outcome

    def close(self) -> None:
        self.inner.close()


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
              f"{_pct(result.external_mape_pct)}", file=out, flush=True)


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
        f"{format_duration(r.acquisition_s):>9}  {_pct(r.internal_error_pct):>8}  "
        f"{_pct(r.external_mape_pct):>8}  {assignment}"
    )


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.2f}h"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}%"


class StoreRecorder(Observer):
    """Records a campaign in the store as it goes: each finished run and its sample are
    committed before the next experiment starts; convergence log and model versions follow."""

    def __init__(self, store: Any, name: str) -> None:
        self.store = store
        self.name = name

    def asked(self, requests: Sequence[RunRequest]) -> None:
        self.store.queue_runs(self.name, requests)

    def outcome(self, outcome: RunOutcome) -> None:
        self.store.record_outcome(self.name, outcome)

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        self.store.record_iteration(self.name, record)
        if model is not None:
            self.store.save_model(self.name, record.run, model.to_dict())

    def finished(self, result: CampaignResult) -> None:
        if result.failed_streak:  # a broken workbench: resume runs these again once fixed
            self.store.reopen_runs(self.name, result.failed_streak)
            self.store.set_status(self.name, "failed", stopped_because=result.stopped_because)
            return
        self.store.set_status(self.name, "done", stopped_because=result.stopped_because or "")

    def aborted(self, error: BaseException) -> None:
        with contextlib.suppress(NimoError):
            reason = one_line(error, with_type=True)
            self.store.set_status(self.name, "interrupted", stopped_because=reason)
