"""Algorithm 1: active and accelerated learning of the predictor functions.

Phases: PBDF runs (when any choice needs relevance or PB rows) -> internal test set (fixed-test
error methods) -> reference run (Min/Max/Rand) -> training loop (pick a predictor, maybe add an
attribute, pick an assignment by L_max-I_1, L_2-I_2 or L_max-I_1 followed by uncertainty
sampling; refit; recompute the error; stop at the threshold).
"""

from __future__ import annotations

import numpy as np

from nimo.doe import pbdf_design
from nimo.errors import ConfigError
from nimo.planner.common import BasePlanner
from nimo.planner.design import TARGET_OF, DesignSpec
from nimo.planner.learner import Learner
from nimo.planner.relevance import (
    ofat_attribute_order,
    ofat_predictor_order,
    rank_attributes,
    rank_predictors,
)
from nimo.planner.sequences import lmax_level_order
from nimo.records import IterationRecord, RunOutcome, RunRequest, Sample
from nimo.space import Assignment, ResourceSpace

UNCERTAINTY_POOL = 4000


class NimoPlanner(BasePlanner):
    """NIMO's planner with every choice of Table 1 selectable through a DesignSpec."""

    def __init__(self, space: ResourceSpace, design: DesignSpec, seed: int, kind: str) -> None:
        super().__init__(space, design, seed, kind)
        self.reference = self._choose_reference()
        self.learner = Learner(space, kind, self.reference, self.options)
        self.predictors = self.learner.predictor_names
        self.pbdf_rows: list[Assignment] = []
        self.pbdf_samples: dict[Assignment, Sample] = {}
        self.test_samples: list[Sample] = []
        self.test_set: set[Assignment] = set()
        self.phase = "pbdf" if design.needs_pbdf else "test"
        self.predictor_order = self._static_predictor_order()
        self.attribute_order = self._static_attribute_order()
        self.current: dict[str, str | None] = {p: None for p in self.predictors}
        self.cursor = {p: 0 for p in self.predictors}
        self.on_current = {p: 0 for p in self.predictors}
        self.errors_of: dict[str, list[float]] = {p: [] for p in self.predictors}
        self.visited: dict[str, set[float]] = {n: set() for n in space.names}
        self.rr = 0
        self.focus = 0
        self.l2_rows: list[Assignment] = []
        self.uncertainty_mode = False
        self._exhausted: set[str] = set()
        self._attr_done: set[str] = set()
        self.reference_sample: Sample | None = None
        self.ofat: dict[str, Sample] = {}
        self.agreement: float | None = None
        self.uncertainty_runs = 0

    # -- initial choices -------------------------------------------------------------
    def _choose_reference(self) -> Assignment:
        if self.design.reference == "min":
            return self.space.min_capacity()
        if self.design.reference == "max":
            return self.space.max_capacity()
        return self.space.random(self.rng)

    def _static_predictor_order(self) -> list[str]:
        order = self.design.predictor_order
        if order in ("pbdf", "ofat") or self.kind == "direct":
            return list(self.predictors)
        return [p for p in order if p in self.predictors] + [
            p for p in self.predictors if p not in order
        ]

    def _static_attribute_order(self) -> dict[str, list[str]]:
        given = self.design.attribute_order
        names = list(self.space.names)
        out = {p: list(names) for p in self.predictors}
        if given in ("pbdf", "ofat"):
            return out
        for p, attrs in given.items():
            for a in attrs:
                if a not in names:
                    raise ConfigError(f"attribute_order.{p}: unknown attribute {a!r}",
                                      hint="valid: " + ", ".join(names))
            if p in out:
                out[p] = list(attrs) + [a for a in names if a not in attrs]
        return out

    # -- ask ---------------------------------------------------------------------------
    def ask(self) -> list[RunRequest]:
        early = self._ask_preamble()
        if early is not None:
            return early
        if self.phase == "pbdf":
            return self._ask_pbdf()
        if self.phase == "test":
            batch = self._ask_test()
            if batch:
                return batch
            self.phase = "reference"
        if self.phase == "reference":
            return self._ask_reference()
        if self.phase == "screen":
            return self._ask_screen()
        return self._ask_train()

    def _ask_screen(self) -> list[RunRequest]:
        """One-factor-at-a-time screening: each attribute at the level farthest from the
        reference, the others at the reference (a batch of k independent runs)."""
        taken = self.measured | self.failed | self.test_set
        batch = []
        for i, attr in enumerate(self.space.attributes):
            far = max(attr.levels, key=lambda v: (abs(v - self.reference[i]), v))
            if far == self.reference[i]:
                continue
            target = list(self.reference)
            target[i] = far
            a = self.space.nearest(target, exclude=taken, priority=[i])
            if a[i] != far or a in [self.space.from_dict(r.assignment) for r in batch]:
                continue
            self.visited[attr.name].add(far)
            batch.append(self._request(a, "train", f"screen:{attr.name}"))
        if not batch:
            self._finish_screen()
            return self._ask_train()
        return batch

    def _ask_pbdf(self) -> list[RunRequest]:
        k = len(self.space.names)
        design = pbdf_design(k)
        rows: list[Assignment] = []
        for signs in design:
            target = [a.hi if s > 0 else a.lo for a, s in zip(self.space.attributes, signs,
                                                                strict=True)]
            snapped = self.space.nearest(target)
            if snapped != tuple(target):
                self.notes.append(f"PBDF row {tuple(target)} snapped to {snapped}")
            if snapped not in rows:
                rows.append(snapped)
        self.pbdf_rows = rows
        return [self._request(a, "pbdf") for a in rows]

    def _ask_test(self) -> list[RunRequest]:
        if self.test_set or self.design.error == "loo":
            return []
        if self.design.error == "test_pbdf":
            self.test_samples = list(self.pbdf_samples.values())[: self.design.test_size]
            self.test_set = {self.space.from_dict(s.assignment) for s in self.test_samples}
            return []
        pool = self.unmeasured(exclude=[self.reference])
        if len(pool) <= self.design.test_size:
            raise ConfigError(f"test_size {self.design.test_size} leaves no assignment to train on",
                              hint=f"at most {len(pool) - 1} here")
        picks = self.rng.choice(len(pool), size=self.design.test_size, replace=False)
        chosen = [pool[int(i)] for i in sorted(picks)]
        self.test_set = set(chosen)
        return [self._request(a, "test") for a in chosen]

    def _ask_reference(self) -> list[RunRequest]:
        ref = self.reference
        reuse = self.pbdf_samples.get(ref)
        if reuse is not None and ref not in self.test_set:
            self._start_training(reuse, reused=True)
            return self._ask_train()
        if ref in self.failed or ref in self.test_set:
            wanted = self.reference
            self.reference = self.space.nearest(wanted, exclude=self.failed | self.test_set)
            self.learner.reference = self.reference
            self.notes.append(f"reference {wanted} unavailable; using {self.reference}")
            return self._ask_reference()
        return [self._request(ref, "reference")]

    # -- training loop -----------------------------------------------------------------
    def _ask_train(self) -> list[RunRequest]:
        if (self.design.sampling == "lmax_i1+uncertainty" and not self.uncertainty_mode
                and self._covered()):
            self.uncertainty_mode = True
            self._activate_all()
            self.notes.append(f"run {self._next_run}: every attribute covered; switching to "
                              "uncertainty sampling")
        for _ in range(4 * len(self.predictors) * (len(self.space.names) + 1)):
            if self.uncertainty_mode:
                a = self._select_uncertain()
                if a is None:
                    break
                return [self._request(a, "train", self._choose_predictor())]
            f = self._choose_predictor()
            attr = self._attribute_for(f)
            if attr is None:
                if self.design.sampling == "lmax_i1+uncertainty":
                    self.uncertainty_mode = True
                    self._activate_all()
                    self.notes.append(f"run {self._next_run}: switching to uncertainty sampling")
                    continue
                self._exhausted.add(f)
                for a in self.attribute_order[f]:  # measured already: joins f at no cost
                    if a not in self.learner.active[f]:
                        self.learner.active[f].append(a)
                if len(self._exhausted) == len(self.predictors):
                    self.learner.refit()
                    break
                self.rr += 1
                continue
            a = self._select_l2() if self.design.sampling == "l2_i2" else self._select_lmax(attr)
            if a is None:
                self._attr_done.add(attr)
                continue
            return [self._request(a, "train", f)]
        return self._stop("no candidate assignment left that the sampling strategy can choose")

    COVERAGE_LEVELS = 4

    def _covered(self) -> bool:
        """Every attribute has min(4, its level count) levels measured around the reference."""
        return all(
            len(self.visited[a.name]) >= min(self.COVERAGE_LEVELS, len(a.levels))
            or a.name in self._attr_done
            for a in self.space.attributes
        )

    def _activate_all(self) -> None:
        """Uncertainty sampling varies everything at once: every predictor may use every
        attribute (its transforms and interactions still chosen by internal error)."""
        for p in self.predictors:
            for a in self.attribute_order[p]:
                if a not in self.learner.active[p]:
                    self.learner.active[p].append(a)

    def _choose_predictor(self) -> str:
        order = [p for p in self.predictor_order if p not in self._exhausted] or self.predictors
        if self.design.traversal == "round_robin":
            return order[self.rr % len(order)]
        if self.design.traversal == "improvement":
            return order[self.focus % len(order)]
        errs = {p: (self.predictor_errors.get(p) or 0.0) for p in order}  # dynamic: Algorithm 4
        return max(order, key=lambda p: (errs[p], -order.index(p)))

    def _attribute_for(self, f: str) -> str | None:
        """Step 2.2: keep the current attribute, or add the next in f's order."""
        cur = self.current[f]
        if cur is not None and cur not in self._attr_done:
            errs = self.errors_of[f]
            stalled = (
                self.on_current[f] >= 2
                and len(errs) >= 2
                and errs[-2] - errs[-1] < self.design.attribute_threshold_pct
            )
            if not stalled:
                return cur
        return self._add_next(f)

    def _add_next(self, f: str) -> str | None:
        """Add the next attribute of f's order (cycling, as the paper does once all are in).
        An attribute whose levels around the reference are all measured already joins f
        at no cost, and the next one is tried."""
        order = self.attribute_order[f]
        open_attrs = [a for a in order if a not in self._attr_done]
        for step in range(len(order)):
            attr = order[(self.cursor[f] + step) % len(order)]
            if attr not in self.learner.active[f]:
                self.learner.active[f].append(attr)
            if attr in self._attr_done or (attr == self.current[f] and len(open_attrs) > 1):
                continue
            self.cursor[f] = (self.cursor[f] + step + 1) % len(order)
            self.current[f] = attr
            self.on_current[f] = 0
            return attr
        return None

    def _select_lmax(self, attr: str) -> Assignment | None:
        """Algorithm 5: the next unvisited level of ``attr``, others at the reference."""
        i = self.space.index(attr)
        taken = self.measured | self.failed | self.test_set
        for v in lmax_level_order(self.space.attributes[i].levels):
            if v in self.visited[attr]:
                continue
            target = list(self.reference)
            target[i] = v
            target_t = tuple(target)
            if target_t in taken:
                self.visited[attr].add(v)
                continue
            options = [c for c in self.space.candidates if c[i] == v and c not in taken]
            if not options:
                self.visited[attr].add(v)
                continue
            self.visited[attr].add(v)
            if target_t in options:
                return target_t
            snapped = self.space.nearest(target, exclude=taken, priority=[i])
            if snapped[i] == v:
                self.notes.append(f"run {self._next_run}: {target_t} not available, "
                                  f"snapped to {snapped}")
                return snapped
        return None

    def _select_l2(self) -> Assignment | None:
        """L_2-I_2: the next PBDF row not yet run; further (larger) PB designs when spent."""
        taken = self.measured | self.failed | self.test_set
        k = len(self.space.names)
        extra = 0
        while True:
            for a in self.l2_rows or self.pbdf_rows:
                if a not in taken:
                    return a
            extra += 4
            if k + extra > 60:
                return None
            cols = self.rng.permutation(k + extra)[:k]
            design = pbdf_design(k + extra)[:, cols]
            self.l2_rows = []
            for signs in design:
                target = [a.hi if s > 0 else a.lo
                          for a, s in zip(self.space.attributes, signs, strict=True)]
                snapped = self.space.nearest(target, exclude=taken)
                if snapped not in self.l2_rows:
                    self.l2_rows.append(snapped)

    def _select_uncertain(self) -> Assignment | None:
        """Cost-aware uncertainty sampling: the unmeasured candidate whose predicted T is most
        uncertain relative to its mean, per second of expected run time."""
        pool = self.candidate_pool(list(self.test_set), UNCERTAINTY_POOL)
        if not pool:
            return None
        X = np.asarray(pool, float)
        self.uncertainty_runs += 1
        if self.uncertainty_runs <= len(self.space.names):
            return pool[int(np.argmax(self._spread_score(X)))]
        preds = self.learner.committee(X)
        mean = np.maximum(np.median(preds, axis=0), 1e-9)
        spread = (preds.max(axis=0) - preds.min(axis=0)) / mean
        _, var, _ = self.learner.model().predict_var_many(X)
        rel_sd = np.sqrt(np.maximum(var, 0.0)) / mean
        score = (spread + rel_sd) / mean ** self.design.cost_exponent
        score = np.where(np.isfinite(score), score, -np.inf)
        return pool[int(np.argmax(score))]

    def _spread_score(self, X: np.ndarray) -> np.ndarray:
        """Cost-aware maximin: distance to the nearest measured assignment, per predicted
        run time to the power ``cost_exponent``. Distances are in level ranks scaled to
        [0, 1], so geometric levels (20, 50, 100, 400 Mbit/s) count as evenly spread. Off-axis
        points like these expose interactions that one-at-a-time sampling cannot see."""
        scaled = self._rank_scale(X)
        seen = self._rank_scale(np.asarray(sorted(self.measured), float))
        d = np.sqrt(((scaled[:, None, :] - seen[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
        mean = np.maximum(self.learner.model().predict_many(X), 1e-9)
        return d / mean ** self.design.cost_exponent

    def _rank_scale(self, X: np.ndarray) -> np.ndarray:
        """Each attribute's value as its position among the attribute's levels, in [0, 1]
        (interpolated between levels for values off the grid)."""
        out = np.empty_like(X, dtype=float)
        for j, attr in enumerate(self.space.attributes):
            levels = np.asarray(sorted(attr.levels), float)
            ranks = np.arange(len(levels), dtype=float) / max(len(levels) - 1, 1)
            out[:, j] = np.interp(X[:, j], levels, ranks)
        return out

    # -- tell --------------------------------------------------------------------------
    def tell(self, outcome: RunOutcome) -> IterationRecord:
        req, a, sample = self._accept(outcome)
        if req.purpose == "pbdf":
            if sample is not None:
                self.pbdf_samples[a] = sample
            if not self._pending:
                self._finish_pbdf()
            return self._record(req, outcome)
        if req.purpose == "test":
            if sample is not None:
                self.test_samples.append(sample)
            if not self._pending:
                self.phase = "reference"
            return self._record(req, outcome)
        if req.purpose == "reference":
            if sample is None:
                return self._record(req, outcome)  # ask() picks the nearest other reference
            self._start_training(sample, reused=False)
            return self._after_training_sample(req, outcome)
        if sample is not None:
            self.learner.add(sample)
            if req.predictor and req.predictor.startswith("screen:"):
                self.ofat[req.predictor.split(":", 1)[1]] = sample
        if self.phase == "screen" and not self._pending:
            self._finish_screen()
        if req.predictor is not None and req.predictor in self.on_current:
            self.on_current[req.predictor] += 1
        return self._after_training_sample(req, outcome)

    def _finish_pbdf(self) -> None:
        samples = [self.pbdf_samples[a] for a in self.pbdf_rows if a in self.pbdf_samples]
        self.phase = "test"
        if len(samples) < 2:
            self.notes.append("too few PBDF runs succeeded to rank; using the static orders")
            return
        if self.design.predictor_order == "pbdf" and self.kind == "occupancy":
            self.predictor_order = rank_predictors(self.space, samples)
        if self.design.attribute_order == "pbdf":
            for p in self.predictors:
                self.attribute_order[p] = rank_attributes(self.space, samples, TARGET_OF[p])
        if self.design.pbdf_training and self.design.error != "test_pbdf":
            for s in samples:
                if self.space.from_dict(s.assignment) != self.reference:
                    self.learner.add(s)

    def _finish_screen(self) -> None:
        self.phase = "train"
        ref = self.reference_sample
        if ref is None or self.kind == "direct" and not self.ofat:
            return
        if self.design.predictor_order == "ofat" and self.kind == "occupancy":
            self.predictor_order = ofat_predictor_order(ref, self.ofat)
        if self.design.attribute_order == "ofat":
            for p in self.predictors:
                order, effects = ofat_attribute_order(self.space, ref, self.ofat, TARGET_OF[p])
                self.attribute_order[p] = order
                # Screening already measured each attribute's main effect: start every
                # predictor with the attributes that visibly move its target.
                top = max(effects.values(), default=0.0)
                for a in order:
                    if top > 0 and effects[a] >= max(0.05 * top, 0.01 * abs(
                            ref.target(TARGET_OF[p]))):
                        self.learner.active[p].append(a)
                if self.learner.active[p]:
                    self.current[p] = self.learner.active[p][0]
                    self.cursor[p] = order.index(self.current[p]) + 1
        self._refit_and_score()

    def _start_training(self, sample: Sample, reused: bool) -> None:
        self.learner.add(sample)
        self.learner.set_reference_sample(sample)
        for name in self.space.names:
            self.visited[name].add(self.reference[self.space.index(name)])
        self.reference_sample = sample
        self.phase = "screen" if self.design.needs_ofat else "train"
        self._exhausted = set()
        self._attr_done = set()
        if reused:
            self.notes.append("reference measured by PBDF; reused without a new run")
        self._refit_and_score()

    def _after_training_sample(self, req: RunRequest, outcome: RunOutcome) -> IterationRecord:
        if self.phase == "train" and outcome.ok:
            before = dict(self.predictor_errors)
            self._refit_and_score()
            f = req.predictor
            if f in self.errors_of and req.purpose == "train":
                self.errors_of[f].append(self.predictor_errors.get(f) or 0.0)
                self._advance_traversal(f, before.get(f), self.predictor_errors.get(f))
        if self.phase == "train" and outcome.ok and self.internal_error is not None:
            self.error_history.append(self.internal_error)
        record = self._record(req, outcome, agreement_pct=self.agreement)
        plateau = self._plateaued()
        if plateau and (self.design.sampling != "lmax_i1+uncertainty"
                        or self.uncertainty_runs >= len(self.space.names)):
            self.stopped_because = plateau
            return record
        reason = self._converged()
        if reason and self._agrees():
            self.stopped_because = reason + (
                f"; committee agrees within {self.agreement:.1f}%"
                if self.agreement is not None else "")
        return record

    def _agrees(self) -> bool:
        """The optional committee condition: alternative predictor fits agree over the
        candidates (mean relative spread of predicted T <= stop.agreement_pct)."""
        limit = self.design.stop.agreement_pct
        if limit is None:
            return True
        if self.design.sampling == "lmax_i1+uncertainty" and (
            not self.uncertainty_mode or self.uncertainty_runs < len(self.space.names)
        ):
            return False
        pool = self.candidate_pool(list(self.test_set), UNCERTAINTY_POOL)
        if not pool:
            return True
        preds = self.learner.committee(np.asarray(pool, float), plausible_only=True)
        if len(preds) < 2:  # no plausible alternative: agreement is not shown, keep sampling
            self.agreement = None
            return False
        mean = np.maximum(np.median(preds, axis=0), 1e-9)
        self.agreement = float(np.mean((preds.max(axis=0) - preds.min(axis=0)) / mean) * 100)
        return self.agreement <= limit

    def _advance_traversal(self, f: str, before: float | None, after: float | None) -> None:
        if self.design.traversal == "round_robin":
            self.rr += 1
        elif self.design.traversal == "improvement":
            gain = (before - after) if before is not None and after is not None else None
            if gain is not None and gain < self.design.improvement_threshold_pct \
                    and self.on_current[f] >= 2:
                self.focus += 1

    def _refit_and_score(self) -> None:
        self.learner.refit()
        if self.design.error == "loo":
            total, per = self.learner.loo_errors()
        else:
            total, per = self.learner.test_errors(self.test_samples)
        self.internal_error = total
        self.predictor_errors = per
