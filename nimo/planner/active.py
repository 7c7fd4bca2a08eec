"""Algorithm 1: active and accelerated learning of the predictor functions.

Phases: PBDF runs (when a chosen strategy needs them) -> internal test set (fixed-test error
estimates) -> reference run -> screening (when a strategy needs it) -> training loop (the
traversal picks a predictor, the attribute walk keeps or adds an attribute, the sampling
picks an assignment; refit; the error estimate scores; the stop rule decides). Every choice
of Table 1 is a strategy object (:mod:`nimo.planner.strategies`); this module is the loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from nimo.planner.common import BasePlanner
from nimo.planner.design import DesignSpec
from nimo.planner.learner import Learner
from nimo.planner.screening import PbdfRuns, pbdf_rows, screen_probes
from nimo.planner.strategies.chosen import strategies_for
from nimo.planner.walk import AttributeWalk
from nimo.records import IterationRecord, RunOutcome, RunRequest, Sample
from nimo.space import Assignment, ResourceSpace

NOTHING_TO_PICK = "no candidate assignment left that the sampling strategy can choose"
SCREEN_PREFIX = "screen:"


class NimoPlanner(BasePlanner):
    """NIMO's planner composing the strategies a DesignSpec chooses (see
    :class:`nimo.planner.strategies.view.PlanView` for what they see of it)."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        super().__init__(space, design, seed, kind)
        space = self.space  # with the design's load attributes marked
        self.strategies = strategies_for(design)
        self.reference = self.strategies.reference.choose(space, self.rng)
        self.learner = Learner(space, kind, self.reference, self.options)
        predictors = self.learner.predictor_names
        self.predictor_order = self.strategies.predictor_order.initial(predictors, kind)
        self.walk = AttributeWalk(self.strategies.attribute_order.initial(space, predictors),
                                  design.attribute_threshold_pct)
        self.visited: dict[str, set[float]] = {n: set() for n in space.names}
        self.pbdf = PbdfRuns()
        self.probes: dict[str, Sample] = {}  # screening runs by the attribute they moved
        self.reference_sample: Sample | None = None
        self.phase = "pbdf" if "pbdf" in self.strategies.needs else "test"

    # -- what strategies see (PlanView) ------------------------------------------------
    @property
    def held_out(self) -> set[Assignment]:
        return self.strategies.error.held_out

    @property
    def finished_attributes(self) -> set[str]:
        return self.walk.done

    @property
    def pbdf_rows(self) -> list[Assignment]:
        return self.pbdf.rows

    @property
    def pbdf_samples(self) -> dict[Assignment, Sample]:
        return self.pbdf.samples

    def taken(self) -> set[Assignment]:
        return self.ledger.measured | self.ledger.failed | self.held_out

    def use_every_attribute(self) -> None:
        self.walk.join_all(self.learner.active)

    # -- ask ---------------------------------------------------------------------------
    def ask(self) -> list[RunRequest]:
        early = self._ask_preamble()
        if early is not None:
            return early
        if self.phase == "pbdf":
            self.pbdf.rows = pbdf_rows(self.space, self.notes)
            return [self._request(a, "pbdf") for a in self._capped(self.pbdf.rows)]
        if self.phase == "test":
            batch = [self._request(a, "test")
                     for a in self._capped(self.strategies.error.plan_test_set(self))]
            if batch:
                return batch
            self.phase = "reference"
        if self.phase == "reference":
            return self._ask_reference()
        if self.phase == "screen":
            return self._ask_screen()
        return self._ask_train()

    def _ask_reference(self) -> list[RunRequest]:
        ref = self.reference
        reuse = self.pbdf.samples.get(ref)
        if reuse is not None and ref not in self.held_out:
            self._start_training(reuse, reused=True)
            return self._ask_train()
        if ref in self.ledger.failed or ref in self.held_out:
            self.reference = self.space.nearest(ref, exclude=self.ledger.failed | self.held_out)
            self.learner.reference = self.reference
            self.notes.append(f"reference {ref} unavailable; using {self.reference}")
            return self._ask_reference()
        return [self._request(ref, "reference")]

    def _ask_screen(self) -> list[RunRequest]:
        """The screening probes as one batch of independent runs."""
        batch = []
        probes = screen_probes(self.space, self.reference, self.taken())
        for name, a in probes[: len(self._capped([a for _, a in probes]))]:
            self.visited[name].add(a[self.space.index(name)])
            batch.append(self._request(a, "train", SCREEN_PREFIX + name))
        if not batch:
            self._finish_screen()
            return self._ask_train()
        return batch

    def _ask_train(self) -> list[RunRequest]:
        sampling = self.strategies.sampling
        sampling.before_pick(self)
        for _ in range(4 * len(self.learner.predictor_names) * (len(self.space.names) + 1)):
            if sampling.free:
                batch = self._ask_free_batch()
                if not batch:
                    break
                return batch
            f = self._choose_predictor()
            attr = self.walk.attribute_for(f, self.learner.active[f])
            if attr is None:
                if sampling.attributes_spent(self):
                    continue
                if self._exhaust(f):
                    break
                continue
            a = sampling.select(self, attr)
            if a is None:
                self.walk.done.add(attr)
                continue
            return [self._request(a, "train", f)]
        return self._stop(NOTHING_TO_PICK)

    def _ask_free_batch(self) -> list[RunRequest]:
        """Up to ``batch`` training runs picked greedily: each pick sees the earlier ones of
        the batch as placed (``in_flight``), so they are distinct and spread out."""
        batch: list[RunRequest] = []
        for _ in range(self._batch_room()):
            a = self.strategies.sampling.select_free(self)
            if a is None:
                break
            batch.append(self._request(a, "train", self._choose_predictor()))
        return batch

    def _choose_predictor(self) -> str:
        order: Sequence[str] = (self.walk.open_predictors(self.predictor_order)
                                or self.learner.predictor_names)
        return self.strategies.traversal.choose(order, self.predictor_errors)

    def _exhaust(self, f: str) -> bool:
        """f has nothing left to explore; True once no predictor has (after a last refit)."""
        self.walk.exhaust(f, self.learner.active[f])
        if len(self.walk.exhausted) == len(self.learner.predictor_names):
            self.learner.refit()
            return True
        self.strategies.traversal.skip()
        return False

    # -- tell --------------------------------------------------------------------------
    def tell(self, outcome: RunOutcome) -> IterationRecord:
        req, a, sample = self.ledger.accept(outcome)
        if req.purpose == "pbdf":
            if sample is not None:
                self.pbdf.samples[a] = sample
            if not self.ledger.pending:
                self._finish_pbdf()
            return self._record(req, outcome)
        if req.purpose == "test":
            if sample is not None:
                self.strategies.error.add_test_sample(sample)
            if not self.ledger.pending:
                self.phase = "reference"
            return self._record(req, outcome)
        if req.purpose == "reference":
            if sample is None:
                return self._record(req, outcome)  # ask() picks the nearest other reference
            self._start_training(sample, reused=False)
            return self._after_training_sample(req, outcome)
        return self._tell_train(req, outcome, sample)

    def _tell_train(self, req: RunRequest, outcome: RunOutcome, sample: Sample | None
                    ) -> IterationRecord:
        if sample is not None:
            if self.phase == "train":
                self._note_prospective(sample, self.strategies.error)
            self.learner.add(sample)
            if req.predictor and req.predictor.startswith(SCREEN_PREFIX):
                self.probes[req.predictor.removeprefix(SCREEN_PREFIX)] = sample
        if self.phase == "screen" and not self.ledger.pending:
            self._finish_screen()
        if req.predictor is not None:
            self.walk.ran(req.predictor)
        return self._after_training_sample(req, outcome)

    def _finish_pbdf(self) -> None:
        samples = self.pbdf.measured()
        self.phase = "test"
        if len(samples) < 2:
            self.notes.append("too few PBDF runs succeeded to rank; using the static orders")
            return
        order = self.strategies.predictor_order.after_pbdf(self.space, samples, self.kind)
        if order is not None:
            self.predictor_order = order
        self.strategies.attribute_order.after_pbdf(self.space, samples, self.walk)
        if self.design.pbdf_training and self.strategies.error.trains_on_pbdf:
            for s in samples:
                if self.space.from_dict(s.assignment) != self.reference:
                    self.learner.add(s)

    def _finish_screen(self) -> None:
        self.phase = "train"
        ref = self.reference_sample
        if ref is None or self.kind == "direct" and not self.probes:
            return
        order = self.strategies.predictor_order.after_screen(ref, self.probes, self.kind)
        if order is not None:
            self.predictor_order = order
        self.strategies.attribute_order.after_screen(self.space, ref, self.probes, self.walk,
                                                     self.learner.active)
        self._refit_and_score()

    def _start_training(self, sample: Sample, reused: bool) -> None:
        self.learner.add(sample)
        self.learner.set_reference_sample(sample)
        for i, name in enumerate(self.space.names):
            self.visited[name].add(self.reference[i])
        self.reference_sample = sample
        self.phase = "screen" if "ofat" in self.strategies.needs else "train"
        self.walk.restart()
        if reused:
            self.notes.append("reference measured by PBDF; reused without a new run")
        self._refit_and_score()

    def _after_training_sample(self, req: RunRequest, outcome: RunOutcome) -> IterationRecord:
        if self.phase == "train" and outcome.ok:
            self._learn_from(req)
            if self.internal_error is not None:
                self.error_history.append(self.internal_error)
        agreement = self.strategies.agreement
        record = self._record(req, outcome, agreement_pct=agreement.last)
        exploring = self.strategies.sampling.exploring(self)
        plateau = self._stop_reason("plateau")
        if plateau and not exploring:
            self.stopped_because = plateau
            return record
        reason = self._stop_reason("converged")
        if reason and agreement.agrees(self, exploring):
            self.stopped_because = reason + (
                f"; committee agrees within {agreement.last:.1f}%"
                if agreement.last is not None else "")
        return record

    def _learn_from(self, req: RunRequest) -> None:
        """Refit and score; a training run for a predictor advances its traversal."""
        before = dict(self.predictor_errors)
        self._refit_and_score()
        f = req.predictor
        if f in self.walk.errors_of and req.purpose == "train":
            assert f is not None
            self.walk.errors_of[f].append(self.predictor_errors.get(f) or 0.0)
            self.strategies.traversal.after_run(before.get(f), self.predictor_errors.get(f),
                                                self.walk.on_current[f])

    def _refit_and_score(self) -> None:
        self.learner.refit()
        self._score(*self.strategies.error.score(self.learner))
