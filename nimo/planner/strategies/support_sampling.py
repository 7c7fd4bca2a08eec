"""The support-point samplings (``recommended``'s family): training runs spread out and
distributed like the candidate assignments (Mak & Joseph 2018), then every attribute's edge
levels, then the runs that cut a Gaussian process's variance the most."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from nimo.planner.strategies.levels import common_levels, unmeasured_levels
from nimo.planner.strategies.sampling import UNCERTAINTY_POOL, FreeSampling, spoken_for
from nimo.planner.strategies.support import EnergyCriterion, cost_aware_pick
from nimo.planner.strategies.variance import (
    MAX_POOL,
    MAX_TARGETS,
    over_rows,
    seeded_subset,
    variance_reduction,
)
from nimo.space import Assignment

if TYPE_CHECKING:
    from nimo.planner.strategies.view import PlanView


class SupportPoints(FreeSampling):
    """Every pick a greedy support point (``nimo.planner.strategies.support``): measured
    assignments spread out and distributed like the candidates, every attribute used from
    the first pick. The model does not steer the picks, so the cross-validated error over
    them estimates the error over the candidate space; ``cost_exponent`` prefers, among
    nearly equally good picks, the ones predicted to run faster."""

    def __init__(self, cost_exponent: float = 0.5) -> None:
        super().__init__(cost_exponent)
        self.energy: EnergyCriterion | None = None

    def select_free(self, view: PlanView) -> Assignment | None:
        pool = view.candidate_pool(spoken_for(view), UNCERTAINTY_POOL)
        return self._support_pick(view, pool) if pool else None

    def _energy(self, view: PlanView) -> EnergyCriterion:
        """The criterion over ``view``'s candidates, made on first use."""
        if self.energy is None:
            self.energy = EnergyCriterion(view.space)
        return self.energy

    def _support_pick(self, view: PlanView, pool: list[Assignment]) -> Assignment:
        """The best support point of ``pool`` (cheaper among near-equals)."""
        energy = self._energy(view)
        energy.update(view.measured | view.held_out)
        criterion = energy.of(pool, placed=view.in_flight)
        if not view.learner.fitted:
            return pool[int(np.argmin(criterion))]
        predicted = view.learner.predicted_T(np.asarray(pool, float))
        return pool[cost_aware_pick(criterion, predicted, self.cost_exponent)]


class SupportPointsAndEdges(SupportPoints):
    """Support points that also measure every attribute's smallest and largest level:
    once the start (about 2 runs per attribute) is measured, while some extreme level has
    no measured run, the pick is the best support point among the candidates holding one.
    Support points sit inside the candidate cloud, so an edge level held by few candidates
    can stay unmeasured for dozens of runs, and a model fitted without it extrapolates
    there (tuning suite: a block size 6x the largest measured one, predicted 50x too
    slow while the cross-validated error read 2%)."""

    LEVEL_SHARE: ClassVar[float | None] = None  # also every level this share of candidates hold
    _wanted: list[set[float]] | None = None

    def select_free(self, view: PlanView) -> Assignment | None:
        if view.learner.n >= self.start_size(view):
            pick = self._beyond_start(view, self._unmeasured(view))
            if pick is not None:
                return pick
        return super().select_free(view)

    def _beyond_start(self, view: PlanView, missing: dict[int, set[float]]
                      ) -> Assignment | None:
        """The pick once the start is measured (None: the best support point)."""
        return self._edge_pick(view, missing)

    def _unmeasured(self, view: PlanView) -> dict[int, set[float]]:
        """Per attribute index, its edge (and common) levels that no run holds yet."""
        if self._wanted is None:
            self._wanted = (common_levels(view.space, self.LEVEL_SHARE)
                            if self.LEVEL_SHARE else [])
        return unmeasured_levels(view, self._wanted)

    def _edge_pick(self, view: PlanView, missing: dict[int, set[float]]) -> Assignment | None:
        if not missing:
            return None
        pool = [c for c in view.candidate_pool(spoken_for(view), UNCERTAINTY_POOL)
                if any(c[i] in levels for i, levels in missing.items())]
        if not pool:
            return None
        return self._support_pick(view, pool)


class RelevantSupportPointsAndEdges(SupportPointsAndEdges):
    """``support+edges`` whose distances, after the start, weigh each attribute by its
    relevance: the inverse of its length scale in the Gaussian process on log T fitted to
    the runs (relative to the shortest, at least ``MIN_WEIGHT``). Runs spread along the
    attributes that change the run time instead of over those that do not. Not in
    ``recommended`` (tuning suites, seeds 1,2): tuning-small 29.6 / 14.3 / 9.3% ->
    29.6 / 12.6 / 8.7% after 10 / 20 / 30% of the configurations, but large applications
    reached 10% at any cost in 95% of campaigns instead of 99% (an attribute judged
    irrelevant from the first runs got too few runs); a weight floor of 0.5 lost both."""

    MIN_WEIGHT = 0.2

    def _support_pick(self, view: PlanView, pool: list[Assignment]) -> Assignment:
        kernel = (view.learner.log_t_kernel() if view.learner.n >= self.start_size(view)
                  else None)
        if kernel is not None:
            ls = np.asarray(kernel.lengthscales, float)
            self._energy(view).reweight(np.clip(ls.min() / ls, self.MIN_WEIGHT, 1.0))
        return super()._support_pick(view, pool)


class SupportThenVariance(SupportPointsAndEdges):
    """``support+edges`` until the model blends in its Gaussian process on log T; from then
    on (start and edges measured) the candidate whose run would cut the process's posterior
    variance summed over the candidates the most (cheaper among near-equals): the runs then
    serve the process that interpolates between them (tuning-small: 29.6 / 14.3 / 9.3% ->
    29.6 / 13.9 / 8.2% after 10 / 20 / 30% of the configurations)."""

    def _beyond_start(self, view: PlanView, missing: dict[int, set[float]]
                      ) -> Assignment | None:
        pick = None if missing else self._variance_pick(view)
        return pick if pick is not None else self._edge_pick(view, missing)

    def _variance_pick(self, view: PlanView) -> Assignment | None:
        process = view.learner.gp_process() if view.learner.fitted else None
        pool = view.candidate_pool(spoken_for(view), UNCERTAINTY_POOL)
        if process is None or not pool:
            return None
        rows = np.asarray(sorted(view.measured | view.in_flight), float)
        pool = seeded_subset(pool, MAX_POOL, seed=len(rows))
        X = np.asarray(pool, float)
        targets = seeded_subset(view.space.candidates, MAX_TARGETS, seed=len(rows) + 1)
        gain = variance_reduction(over_rows(process, rows), X, np.asarray(targets, float))
        return pool[cost_aware_pick(-gain, view.learner.predicted_T(X),
                                    self.cost_exponent)]


class SupportLevelsThenVariance(SupportThenVariance):
    """``support+edges+variance`` that, before its variance picks, also measures every level
    a tenth or more of the candidates hold (:mod:`nimo.planner.strategies.levels`)."""

    LEVEL_SHARE = 0.10
