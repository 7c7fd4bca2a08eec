"""Bookkeeping shared by every planner: run numbering, learning time, failures, stop rule."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nimo.errors import ConfigError
from nimo.planner.base import Planner
from nimo.planner.design import DesignSpec
from nimo.planner.learner import Learner
from nimo.predictors import PredictorOptions
from nimo.records import IterationRecord, RunOutcome, RunRequest, Sample
from nimo.space import Assignment, ResourceSpace


class BasePlanner(Planner):
    """Issues numbered requests, charges learning time, applies the stop rule."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        if not space.candidates:
            raise ConfigError("the resource space has no candidate assignments")
        self.space = space
        self.design = design
        self.seed = seed
        self.kind = kind
        self.rng = np.random.default_rng(seed)
        self.options = PredictorOptions.from_dict(design.predictors)
        self.acquisition_s = 0.0
        self.runs_told = 0
        self.failures = 0
        self.measured: set[Assignment] = set()
        self.failed: set[Assignment] = set()
        self.notes: list[str] = []
        self.stopped_because: str | None = None
        self._next_run = 1
        self._pending: dict[int, RunRequest] = {}
        self.learner: Learner | None = None
        self.internal_error: float | None = None
        self.predictor_errors: dict[str, float | None] = {}
        self.error_history: list[float] = []

    # -- requests --------------------------------------------------------------------
    def _request(self, a: Assignment, purpose: str, predictor: str | None = None) -> RunRequest:
        req = RunRequest(self._next_run, self.space.as_dict(a), purpose, predictor)
        self._next_run += 1
        self._pending[req.run] = req
        return req

    def _stop(self, reason: str) -> list[RunRequest]:
        if self.stopped_because is None:
            self.stopped_because = reason
        return []

    def _ask_preamble(self) -> list[RunRequest] | None:
        """What every planner answers before choosing: nothing once stopped, the pending
        requests again while they are out, a stop once a budget is spent; else None."""
        if self.stopped_because is not None:
            return []
        if self._pending:
            return list(self._pending.values())
        spent = self._budget_spent()
        if spent:
            return self._stop(spent)
        return None

    def candidate_pool(self, exclude: Sequence[Assignment] = (), limit: int = 4000
                       ) -> list[Assignment]:
        """Unmeasured candidates; above ``limit`` a seeded random subset in candidate order
        (scoring every one of a huge space would cost more than the runs it saves)."""
        pool = self.unmeasured(exclude)
        if len(pool) > limit:
            idx = self.rng.choice(len(pool), size=limit, replace=False)
            pool = [pool[int(i)] for i in np.sort(idx)]
        return pool

    def _budget_spent(self) -> str | None:
        rule = self.design.stop
        if rule.max_runs is not None and self.runs_told >= rule.max_runs:
            return f"run budget spent ({self.runs_told} runs >= max_runs {rule.max_runs})"
        if rule.max_learning_s is not None and self.acquisition_s >= rule.max_learning_s:
            return (f"learning-time budget spent ({self.acquisition_s:.0f} s >= "
                    f"max_learning_s {rule.max_learning_s:.0f})")
        return None

    def _plateaued(self) -> str | None:
        """Patience rule: the best internal error of the last ``patience`` training runs is
        no better (by 0.5 points) than the best before them."""
        patience = self.design.stop.patience
        hist = self.error_history
        if patience is None or len(hist) <= patience:
            return None
        before, recent = min(hist[:-patience]), min(hist[-patience:])
        if recent > before - 0.5:
            return (f"internal error plateaued at {min(hist):.2f}% (no 0.5-point gain in "
                    f"{patience} runs)")
        return None

    def _converged(self) -> str | None:
        rule = self.design.stop
        if (
            self.learner is not None
            and self.internal_error is not None
            and self.internal_error <= rule.error_pct
            and self.learner.n >= rule.min_samples
        ):
            return (f"internal error {self.internal_error:.2f}% <= {rule.error_pct:g}% "
                    f"with {self.learner.n} training samples")
        return None

    def unmeasured(self, exclude: Sequence[Assignment] = ()) -> list[Assignment]:
        skip = self.measured | self.failed | set(exclude)
        return [c for c in self.space.candidates if c not in skip]

    # -- telling ---------------------------------------------------------------------
    def _accept(self, outcome: RunOutcome) -> tuple[RunRequest, Assignment, Sample | None]:
        req = self._pending.pop(outcome.request.run, None)
        if req is None:
            raise ConfigError(f"run {outcome.request.run} was not issued by this planner "
                              "(or was told twice)")
        a = self.space.from_dict(req.assignment)
        self.runs_told += 1
        if outcome.ok:
            assert outcome.sample is not None
            self.measured.add(a)
            self.acquisition_s += outcome.sample.charged_s
            return req, a, outcome.sample
        self.failed.add(a)
        self.failures += 1
        if outcome.started_at is not None and outcome.ended_at is not None:
            self.acquisition_s += max(0.0, outcome.ended_at - outcome.started_at)
        return req, a, None

    def _record(self, req: RunRequest, outcome: RunOutcome, **extra: object) -> IterationRecord:
        active = self.learner.active if self.learner is not None else {}
        return IterationRecord(
            run=req.run,
            assignment=dict(req.assignment),
            purpose=req.purpose,
            predictor=req.predictor,
            attributes={p: tuple(v) for p, v in active.items()},
            acquisition_s=self.acquisition_s,
            internal_error_pct=self.internal_error,
            status=outcome.status.value,
            reason=outcome.reason,
            extra=extra,
        )

    def model(self):
        if self.learner is None or not self.learner.fitted:
            return None
        return self.learner.model(self.training_summary())

    def training_summary(self) -> dict[str, object]:
        return {
            "design": self.design.name,
            "seed": self.seed,
            "samples": self.learner.n if self.learner else 0,
            "runs": self.runs_told,
            "failures": self.failures,
            "acquisition_s": self.acquisition_s,
            "internal_error_pct": self.internal_error,
            "stopped_because": self.stopped_because,
        }
