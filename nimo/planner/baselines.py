"""Baselines: random sampling with the same predictors, and all samples at once."""

from __future__ import annotations

from nimo.planner.common import BasePlanner
from nimo.planner.design import DesignSpec
from nimo.planner.learner import Learner
from nimo.records import IterationRecord, RunOutcome, RunRequest
from nimo.space import ResourceSpace


class RandomPlanner(BasePlanner):
    """One random unmeasured assignment at a time; predictors use every attribute (their
    transforms and interactions still chosen by internal error); LOO error; same stop rule."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        super().__init__(space, design, seed, kind)
        first = space.random(self.rng)
        self.learner = Learner(space, kind, first, self.options)
        for p in self.learner.predictor_names:
            self.learner.active[p] = list(space.names)
        self.reference = first

    def ask(self) -> list[RunRequest]:
        early = self._ask_preamble()
        if early is not None:
            return early
        if self.learner.n == 0 and self.reference not in self.failed:
            return [self._request(self.reference, "reference")]
        pool = self.unmeasured()
        if not pool:
            return self._stop("every candidate assignment has been measured")
        a = pool[int(self.rng.integers(len(pool)))]
        if self.learner.n == 0:
            self.reference = a
            self.learner.reference = a
            return [self._request(a, "reference")]
        return [self._request(a, "train")]

    def tell(self, outcome: RunOutcome) -> IterationRecord:
        req, _, sample = self._accept(outcome)
        if sample is not None:
            self.learner.add(sample)
            if req.purpose == "reference":
                self.learner.set_reference_sample(sample)
            self.learner.refit()
            self.internal_error, self.predictor_errors = self.learner.loo_errors()
            if self.internal_error is not None:
                self.error_history.append(self.internal_error)
        record = self._record(req, outcome)
        reason = self._converged() or self._plateaued()
        if reason:
            self.stopped_because = reason
        return record


class AllSamplesPlanner(BasePlanner):
    """Measure every candidate once, then fit (the 'learning time for all samples' of Table 2)."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        super().__init__(space, design, seed, kind)
        self.reference = space.min_capacity()
        self.learner = Learner(space, kind, self.reference, self.options)
        for p in self.learner.predictor_names:
            self.learner.active[p] = list(space.names)
        self._asked = False

    def ask(self) -> list[RunRequest]:
        if self.stopped_because is not None:
            return []
        if self._pending:
            return list(self._pending.values())
        if self._asked:
            return self._stop("every candidate assignment has been measured")
        self._asked = True
        return [self._request(a, "train") for a in self.space.candidates]

    def tell(self, outcome: RunOutcome) -> IterationRecord:
        req, a, sample = self._accept(outcome)
        if sample is not None:
            self.learner.add(sample)
            if a == self.reference:
                self.learner.set_reference_sample(sample)
        if not self._pending and self.learner.n:
            if not self.learner.ref_values:
                self.learner.reference = self.learner.space.from_dict(
                    self.learner.samples[0].assignment)
                self.learner.set_reference_sample(self.learner.samples[0])
            self.learner.refit()
            self.internal_error, self.predictor_errors = self.learner.loo_errors()
            self.stopped_because = "every candidate assignment has been measured"
        return self._record(req, outcome)
