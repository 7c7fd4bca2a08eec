"""Bookkeeping shared by every planner: the run ledger, scores, the stop rule, the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nimo.errors import ConfigError
from nimo.model.support import far_share, sampled_candidates
from nimo.planner.base import Planner
from nimo.planner.delivered import average_error_ratio
from nimo.planner.design import DesignSpec
from nimo.planner.learner import Learner
from nimo.planner.ledger import RunLedger
from nimo.planner.prospective import prospective_error_pct
from nimo.planner.strategies.levels import unmeasured_interior_levels
from nimo.planner.strategies.stop import Progress, StopRules, unreached
from nimo.predictors import PredictorOptions
from nimo.records import IterationRecord, RunOutcome, RunRequest, Sample
from nimo.space import Assignment, ResourceSpace

if TYPE_CHECKING:
    from nimo.model import CostModel
    from nimo.planner.strategies.error import ErrorEstimate


class BasePlanner(Planner):
    """Issues numbered requests, charges learning time, applies the stop rule. Subclasses
    set ``learner`` in their constructor."""

    learner: Learner

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        if not space.candidates:
            raise ConfigError("the resource space has no candidate assignments")
        self.space = space.with_load(design.load) if design.load else space
        self.design = design
        self.seed = seed
        self.kind = kind
        self.rng = np.random.default_rng(seed)
        self.options = PredictorOptions.from_dict(design.predictors)
        self.ledger = RunLedger(space)
        self.stop_rules = StopRules(design.stop)
        self.notes: list[str] = []
        self.stopped_because: str | None = None
        self.internal_error: float | None = None
        self.predictor_errors: dict[str, float | None] = {}
        self.error_history: list[float] = []
        self.prospective_errors: list[float] = []  # see Progress.prospective

    # -- what strategies read ----------------------------------------------------------
    @property
    def measured(self) -> set[Assignment]:
        return self.ledger.measured

    @property
    def next_run(self) -> int:
        return self.ledger.next_run

    @property
    def in_flight(self) -> set[Assignment]:
        """The assignments of the requests issued and not yet told (a batch being asked)."""
        return {self.space.from_dict(r.assignment) for r in self.ledger.pending.values()}

    def unmeasured(self, exclude: Sequence[Assignment] = ()) -> list[Assignment]:
        return self.ledger.unmeasured(exclude)

    def candidate_pool(self, exclude: Sequence[Assignment] = (), limit: int = 4000
                       ) -> list[Assignment]:
        """Unmeasured candidates; above ``limit`` a seeded random subset in candidate order
        (scoring every one of a huge space would cost more than the runs it saves)."""
        pool = self.unmeasured(exclude)
        if len(pool) > limit:
            idx = self.rng.choice(len(pool), size=limit, replace=False)
            pool = [pool[int(i)] for i in np.sort(idx)]
        return pool

    # -- asking --------------------------------------------------------------------------
    def _request(self, a: Assignment, purpose: str, predictor: str | None = None) -> RunRequest:
        return self.ledger.issue(a, purpose, predictor)

    def _capped(self, wanted: Sequence[Assignment]) -> list[Assignment]:
        """``wanted`` cut to the runs ``stop.max_runs`` leaves (a batch never overshoots)."""
        limit = self.design.stop.max_runs
        if limit is None:
            return list(wanted)
        return list(wanted)[: max(limit - self.ledger.told - len(self.ledger.pending), 0)]

    def _batch_room(self) -> int:
        """How many training runs one ask may issue: the design's batch, within what
        ``stop.max_runs`` leaves."""
        limit = self.design.stop.max_runs
        room = self.design.batch_size
        if limit is not None:
            room = min(room, limit - self.ledger.told - len(self.ledger.pending))
        return max(room, 0)

    def _stop(self, reason: str) -> list[RunRequest]:
        if self.stopped_because is None:
            if self.design.stop.honest:
                reason += unreached(self.internal_error, self.design.stop.error_pct)
            self.stopped_because = reason
        return []

    def _ask_preamble(self) -> list[RunRequest] | None:
        """What every planner answers before choosing: nothing once stopped, the pending
        requests again while they are out, a stop once a budget is spent; else None."""
        if self.stopped_because is not None:
            return []
        if self.ledger.pending:
            return list(self.ledger.pending.values())
        spent = self._stop_reason("budget")
        if spent:
            return self._stop(spent)
        return None

    def _note_prospective(self, sample: Sample, estimate: ErrorEstimate) -> None:
        """Before a training sample is learned: how far off the current fit predicts it,
        kept for the stop rule and told to the error ``estimate`` (``note_run``)."""
        err = prospective_error_pct(self.learner, sample)
        if err is not None:
            self.prospective_errors.append(err)
        estimate.note_run(self.learner, sample, err)

    # -- scoring and stopping ------------------------------------------------------------
    def _score(self, total: float | None, per: dict[str, float | None]) -> None:
        # the error of the model delivered: with predictors.committee_mean, the average's
        self.internal_error = None if total is None else total * average_error_ratio(
            self.learner)
        self.predictor_errors = per

    def _stop_reason(self, stage: str) -> str | None:
        """The first reason to stop among the stop rule's conditions of ``stage``."""
        progress = Progress(self.ledger.told, self.ledger.acquisition_s, self.internal_error,
                            self.learner.n, self.error_history, self.prospective_errors)
        return self.stop_rules.first(stage, progress)

    # -- telling -------------------------------------------------------------------------
    def _record(self, req: RunRequest, outcome: RunOutcome, **extra: object) -> IterationRecord:
        return IterationRecord(
            run=req.run,
            assignment=dict(req.assignment),
            purpose=req.purpose,
            predictor=req.predictor,
            attributes={p: tuple(v) for p, v in self.learner.active.items()},
            acquisition_s=self.ledger.acquisition_s,
            internal_error_pct=self.internal_error,
            status=outcome.status.value,
            reason=outcome.reason,
            extra=extra,
        )

    def model(self) -> CostModel | None:
        if not self.learner.fitted:
            return None
        return self.learner.model(self.training_summary())

    def training_summary(self) -> dict[str, object]:
        return {
            "design": self.design.name,
            "seed": self.seed,
            "samples": self.learner.n,
            "runs": self.ledger.told,
            "failures": self.ledger.failures,
            "acquisition_s": self.ledger.acquisition_s,
            "internal_error_pct": self.internal_error,
            "stopped_because": self.stopped_because,
            "measured_range": self.measured_range(),
            **({"measured_categories": held} if (held := self.measured_categories()) else {}),
            **self._candidate_shares(sampled_candidates(self.learner.space.candidates)),
        }

    def _candidate_shares(self, sample: np.ndarray) -> dict[str, object]:
        """The summary's figures over one seeded sample of the candidates (drawn once)."""
        far, bad = self.far_share(sample), self.nonpositive_share(sample)
        return {
            **({"far_share": round(far, 4)} if far is not None else {}),
            **({"unmeasured_levels": u} if (u := self.unmeasured_levels(sample)) else {}),
            **({"nonpositive_share": round(bad, 4)} if bad else {}),
        }

    def measured_range(self) -> dict[str, list[float]]:
        """Each knob's lowest and highest value among the samples the model is fitted on:
        beyond them, a prediction extrapolates. Categorical knobs are left to
        :meth:`measured_categories` (their codes have no order)."""
        X = self.learner.X
        if not len(X):
            return {}
        return {a.name: [float(X[:, j].min()), float(X[:, j].max())]
                for j, a in enumerate(self.learner.space.attributes) if not a.categories}

    def far_share(self, sample: np.ndarray) -> float | None:
        """The share of the candidates (``sample``, a seeded subset) far from every sample the
        model is fitted on, as a bounded model flags them (None under 2 samples)."""
        learner = self.learner
        if learner.n < 2:
            return None
        levels = [a.levels for a in learner.space.attributes]
        return far_share(levels, learner.X, sample)

    def unmeasured_levels(self, sample: np.ndarray) -> dict[str, list[list[float]]]:
        """Levels a tenth or more of the candidates (``sample``) hold, inside the measured
        range, that no sample the model is fitted on holds
        (:func:`unmeasured_interior_levels`)."""
        return unmeasured_interior_levels(self.learner.space, self.learner.X, sample=sample)

    def nonpositive_share(self, sample: np.ndarray) -> float:
        """The share of the candidates (``sample``, a seeded subset) where the model predicts
        a T that is not a positive number: an unbounded form gone wrong (a bounded model:
        always 0)."""
        if not self.learner.fitted:
            return 0.0
        T = self.learner.predicted_T(sample)
        return float(np.mean(~(np.isfinite(T) & (T > 0)))) if T.size else 0.0

    def measured_categories(self) -> dict[str, list[int]]:
        """Each categorical knob's codes among the samples the model is fitted on."""
        X, names = self.learner.X, self.learner.space.names
        return {a.name: sorted({int(round(v)) for v in X[:, names.index(a.name)]})
                for a in self.learner.space.attributes if a.categories and len(X)}
