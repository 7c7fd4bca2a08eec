"""Sampling (Table 1): which assignment the next training run measures.

``lmax_i1`` (Algorithm 5) varies the attribute being explored over its levels in
binary-search order, the others at the reference; ``l2_i2`` runs the rows of PB designs;
``lmax_i1+uncertainty`` does L_max-I_1 until every attribute is covered, then cost-aware
uncertainty sampling over all candidates. The support-point family (``recommended``'s) is in
:mod:`nimo.planner.strategies.support_sampling`. To add one: subclass ``Sampling``, implement
``select`` (and the hooks it needs), and add it to ``SAMPLINGS``
(:mod:`nimo.planner.strategies.samplings`) under its name.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from nimo.doe import pbdf_design
from nimo.planner.sequences import lmax_level_order
from nimo.planner.strategies.scoring import (
    MinDistance,
    maximin_score,
    spacefill_score,
    uncertainty_score,
)
from nimo.space import Assignment

if TYPE_CHECKING:
    from nimo.planner.strategies.view import PlanView

UNCERTAINTY_POOL = 4000  # candidates scored per uncertainty pick at most
COVERAGE_LEVELS = 4  # levels per attribute that count as "covered"
MAX_PB_COLUMNS = 60  # L_2-I_2 gives up beyond PB designs this wide


class Sampling(abc.ABC):
    """Picks training assignments, by default one attribute at a time."""

    needs: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, cost_exponent: float = 0.5) -> None:
        self.cost_exponent = cost_exponent

    @abc.abstractmethod
    def select(self, view: PlanView, attribute: str) -> Assignment | None:
        """The next assignment exploring ``attribute``; None when it has none left."""

    @property
    def free(self) -> bool:
        """True once picks no longer follow an attribute (see ``select_free``)."""
        return False

    def select_free(self, view: PlanView) -> Assignment | None:
        """The next assignment in free mode; None when nothing is left."""
        return None

    def before_pick(self, view: PlanView) -> None:
        """Called before each training pick."""
        return None

    def attributes_spent(self, view: PlanView) -> bool:
        """A predictor has no attribute left: True if this sampling switched to free mode."""
        return False

    def exploring(self, view: PlanView) -> bool:
        """True while stopping would be premature (the stop rule waits)."""
        return False


class LmaxI1(Sampling):
    """Algorithm 5: the next unvisited level of the attribute, others at the reference."""

    def select(self, view: PlanView, attribute: str) -> Assignment | None:
        space, visited = view.space, view.visited[attribute]
        i = space.index(attribute)
        taken = view.taken()
        for v in lmax_level_order(space.attributes[i].levels):
            if v in visited:
                continue
            target = list(view.reference)
            target[i] = v
            target_t = tuple(target)
            visited.add(v)
            if target_t in taken or not any(c[i] == v and c not in taken
                                            for c in space.candidates):
                continue
            if target_t in space.candidates:
                return target_t
            snapped = space.nearest(target, exclude=taken, priority=[i])
            if snapped[i] == v:
                view.notes.append(f"run {view.next_run}: {target_t} not available, "
                                  f"snapped to {snapped}")
                return snapped
        return None


class L2I2(Sampling):
    """The next PBDF row not yet run; further (larger, column-shuffled) PB designs when spent."""

    needs = frozenset({"pbdf"})

    def __init__(self, cost_exponent: float = 0.5) -> None:
        super().__init__(cost_exponent)
        self.rows: list[Assignment] = []

    def select(self, view: PlanView, attribute: str) -> Assignment | None:
        taken = view.taken()
        if not any(c not in taken for c in view.space.candidates):
            return None  # every candidate measured: stop cleanly, do not raise
        k = len(view.space.names)
        extra = 0
        while True:
            for a in self.rows or view.pbdf_rows:
                if a not in taken:
                    return a
            extra += 4
            if k + extra > MAX_PB_COLUMNS:
                return None
            cols = view.rng.permutation(k + extra)[:k]
            self.rows = []
            for signs in pbdf_design(k + extra)[:, cols]:
                target = [a.hi if s > 0 else a.lo
                          for a, s in zip(view.space.attributes, signs, strict=True)]
                snapped = view.space.nearest(target, exclude=taken)
                if snapped not in self.rows:
                    self.rows.append(snapped)


class LmaxI1ThenUncertainty(LmaxI1):
    """L_max-I_1 until every attribute is covered (or spent), then cost-aware uncertainty
    sampling: first k maximin picks, then committee disagreement plus predictive sd."""

    def __init__(self, cost_exponent: float = 0.5) -> None:
        super().__init__(cost_exponent)
        self.switched = False
        self.free_runs = 0

    @property
    def free(self) -> bool:
        return self.switched

    def before_pick(self, view: PlanView) -> None:
        if not self.switched and _covered(view):
            self._switch(view, "every attribute covered; switching to uncertainty sampling")

    def attributes_spent(self, view: PlanView) -> bool:
        self._switch(view, "switching to uncertainty sampling")
        return True

    def _switch(self, view: PlanView, why: str) -> None:
        self.switched = True
        view.use_every_attribute()
        view.notes.append(f"run {view.next_run}: {why}")

    def exploring(self, view: PlanView) -> bool:
        return not self.switched or self.free_runs < len(view.space.names)

    def select_free(self, view: PlanView) -> Assignment | None:
        pool = view.candidate_pool(spoken_for(view), UNCERTAINTY_POOL)
        if not pool:
            return None
        X = np.asarray(pool, float)
        self.free_runs += 1
        if self.free_runs <= len(view.space.names):
            seen = np.asarray(sorted(view.measured | view.in_flight), float)
            score = maximin_score(view.space, X, seen, view.learner.predicted_T(X),
                                  self.cost_exponent)
            return pool[int(np.argmax(score))]
        preds = view.learner.committee(X)
        _, var, _ = view.learner.model().predict_var_many(X)
        return pool[int(np.argmax(uncertainty_score(preds, var, self.cost_exponent)))]


def spoken_for(view: PlanView) -> list[Assignment]:
    """What a free pick never chooses besides the measured and failed: the held-out
    assignments and the earlier picks of the batch being asked."""
    return [*view.held_out, *view.in_flight]


def _covered(view: PlanView) -> bool:
    """Every attribute has min(4, its level count) levels visited around the reference, or
    none left."""
    return all(
        len(view.visited[a.name]) >= min(COVERAGE_LEVELS, len(a.levels))
        or a.name in view.finished_attributes
        for a in view.space.attributes
    )


class FreeSampling(Sampling):
    """Never one attribute at a time: every attribute is used from the first pick, and the
    stop rule waits for a start of about 2 runs per attribute."""

    def __init__(self, cost_exponent: float = 0.5) -> None:
        super().__init__(cost_exponent)
        self.joined = False

    def select(self, view: PlanView, attribute: str) -> Assignment | None:
        return self.select_free(view)

    @property
    def free(self) -> bool:
        return True

    def start_size(self, view: PlanView) -> int:
        return 2 * len(view.space.names) + 2

    def before_pick(self, view: PlanView) -> None:
        if not self.joined:
            self.joined = True
            view.use_every_attribute()

    def exploring(self, view: PlanView) -> bool:
        return view.learner.n < self.start_size(view)


class SpaceFillingThenUncertainty(FreeSampling):
    """Never one attribute at a time: every attribute is used from the first pick. A
    space-filling start (cost-aware maximin over the candidates in rank-scaled space, about
    2 runs per attribute), then cost-aware uncertainty sampling (committee spread plus the
    model's predictive sd, divided by predicted T ** cost_exponent) interleaved with a
    maximin pick every ``EXPLORE_EVERY`` runs, so that no region stays unmeasured because
    a model was sure of it."""

    EXPLORE_EVERY = 3

    def __init__(self, cost_exponent: float = 0.5) -> None:
        super().__init__(cost_exponent)
        self.picks = 0
        self.distance: MinDistance | None = None

    def select_free(self, view: PlanView) -> Assignment | None:
        pool = view.candidate_pool(spoken_for(view), UNCERTAINTY_POOL)
        if not pool:
            return None
        if self.distance is None:
            self.distance = MinDistance(view.space)
        self.distance.update(view.measured)
        X = np.asarray(pool, float)
        self.picks += 1
        fitted = bool(view.learner.fitted)
        predicted = view.learner.predicted_T(X) if fitted else np.ones(len(pool))
        if view.learner.n < self.start_size(view) or self.picks % self.EXPLORE_EVERY == 0:
            distance = self.distance.of(pool, placed=view.in_flight)
            score = spacefill_score(distance, predicted, self.cost_exponent)
            return pool[int(np.argmax(score))]
        assert fitted
        preds = view.learner.committee(X)
        _, var, _ = view.learner.model().predict_var_many(X)
        return pool[int(np.argmax(uncertainty_score(preds, var, self.cost_exponent)))]
