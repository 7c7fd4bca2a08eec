"""Baselines: random sampling with the same predictors, and all samples at once."""

from __future__ import annotations

from nimo.planner.common import BasePlanner
from nimo.planner.design import DesignSpec
from nimo.planner.learner import Learner
from nimo.planner.strategies.error import CV_ERRORS, ERROR_ESTIMATES, LeaveOneOut
from nimo.planner.strategies.stop import run_budget_spent
from nimo.records import IterationRecord, RunOutcome, RunRequest
from nimo.space import ResourceSpace

EVERYTHING_MEASURED = "every candidate assignment has been measured"


class RandomPlanner(BasePlanner):
    """One random unmeasured assignment at a time (``batch`` distinct ones per ask once
    training, with a reference measured); predictors use every attribute (their
    transforms and interactions still chosen by internal error); the design's error estimate
    when it needs no test runs (``loo`` or ``cv``), else LOO; same stop rule."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        super().__init__(space, design, seed, kind)
        space = self.space  # with the design's load attributes marked
        self.reference = space.random(self.rng)
        self.learner = _learner_on_every_attribute(self, self.reference)
        # random sampling holds no internal test set: a test-set estimate falls back to LOO
        cv = design.error in CV_ERRORS
        self.error = (ERROR_ESTIMATES[design.error] if cv else LeaveOneOut)(design.test_size)

    def ask(self) -> list[RunRequest]:
        early = self._ask_preamble()
        if early is not None:
            return early
        if self.learner.n == 0 and self.reference not in self.ledger.failed:
            return [self._request(self.reference, "reference")]
        pool = self.unmeasured()
        if not pool:
            return self._stop(EVERYTHING_MEASURED)
        a = pool[int(self.rng.integers(len(pool)))]
        if self.learner.n == 0:
            self.reference = a
            self.learner.reference = a
            return [self._request(a, "reference")]
        room = self._batch_room()
        batch = [self._request(a, "train")]
        while len(batch) < room:  # the rest of a batch: distinct random picks
            pool = self.unmeasured(list(self.in_flight))
            if not pool:
                break
            batch.append(self._request(pool[int(self.rng.integers(len(pool)))], "train"))
        return batch

    def tell(self, outcome: RunOutcome) -> IterationRecord:
        req, _, sample = self.ledger.accept(outcome)
        if sample is not None:
            if req.purpose == "train":
                self._note_prospective(sample, self.error)
            self.learner.add(sample)
            if req.purpose == "reference":
                self.learner.set_reference_sample(sample)
            self.learner.refit()
            self._score(*self.error.score(self.learner))
            if self.internal_error is not None:
                self.error_history.append(self.internal_error)
        record = self._record(req, outcome)
        reason = self._stop_reason("converged") or self._stop_reason("plateau")
        if reason:
            self.stopped_because = reason
        return record


class AllSamplesPlanner(BasePlanner):
    """Measure every candidate once, then fit (the 'learning time for all samples' of Table 2)."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        super().__init__(space, design, seed, kind)
        space = self.space  # with the design's load attributes marked
        self.reference = space.min_capacity()
        self.learner = _learner_on_every_attribute(self, self.reference)
        self._asked = False

    def ask(self) -> list[RunRequest]:
        if self.stopped_because is not None:
            return []
        if self.ledger.pending:
            return list(self.ledger.pending.values())
        if self._asked:
            return self._stop(EVERYTHING_MEASURED)
        self._asked = True
        return [self._request(a, "train") for a in self._capped(self.space.candidates)]

    def tell(self, outcome: RunOutcome) -> IterationRecord:
        req, a, sample = self.ledger.accept(outcome)
        if sample is not None:
            self.learner.add(sample)
            if a == self.reference:
                self.learner.set_reference_sample(sample)
        if not self.ledger.pending and self.learner.n:
            self._fit_all()
        return self._record(req, outcome)

    def _fit_all(self) -> None:
        learner = self.learner
        if not learner.ref_values:  # the reference failed: the first sample stands in
            learner.reference = self.space.from_dict(learner.samples[0].assignment)
            learner.set_reference_sample(learner.samples[0])
        learner.refit()
        self._score(*learner.loo_errors())
        limit = self.design.stop.max_runs  # the one ask ran at most this many candidates
        self.stopped_because = (run_budget_spent(self.ledger.told, limit)
                                if limit is not None and limit < len(self.space.candidates)
                                else EVERYTHING_MEASURED)


def _learner_on_every_attribute(planner: BasePlanner, reference: tuple[float, ...]) -> Learner:
    learner = Learner(planner.space, planner.kind, reference, planner.options)
    for p in learner.predictor_names:
        learner.active[p] = list(planner.space.names)
    return learner
