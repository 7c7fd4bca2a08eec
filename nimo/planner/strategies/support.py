"""Support-point sampling: measured assignments that look like the whole candidate set.

Greedy support points (Mak & Joseph, "Support points", Ann. Statist. 2018): each pick is the
candidate that, added to the measured assignments, makes their energy distance to the
candidate set smallest. Maximin and uncertainty sampling favour corners and edges, so their
training set is unlike the assignments a model is later asked about (and a cross-validated
error over it is unlike the error over the space); random sampling matches the candidates
only on average and leaves gaps by chance. Support points do both: spread out, and
distributed like the candidates. Distances are in rank-scaled space (``rank_scale``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from scipy.spatial.distance import cdist

from nimo.planner.strategies.scoring import rank_scale
from nimo.space import Assignment, ResourceSpace

TARGET_SIZE = 600  # candidates standing for the candidate set in the energy distance


class EnergyCriterion:
    """Per candidate c, with S the measured assignments (n of them) and Y the candidates:
    (n + 1) * mean_y |c - y| - sum_s |c - s|, the part of the energy distance between S + c
    and Y that depends on c (smaller is better). The first term is cached per candidate,
    the second kept up to date incrementally."""

    def __init__(self, space: ResourceSpace) -> None:
        self.space = space
        self.index = {c: i for i, c in enumerate(space.candidates)}
        self.unweighted = rank_scale(space, np.asarray(space.candidates, float))
        rng = np.random.default_rng(len(space.candidates))
        n = len(space.candidates)
        pick = rng.choice(n, size=TARGET_SIZE, replace=False) if n > TARGET_SIZE else None
        self.target_rows = np.arange(n) if pick is None else np.sort(pick)
        self.weights = np.ones(len(space.names))
        self.seen: set[Assignment] = set()
        self._rescale()

    def reweight(self, weights: np.ndarray) -> None:
        """Scale each rank-scaled attribute by its weight (relevance) from now on."""
        weights = np.asarray(weights, float)
        if not np.array_equal(weights, self.weights):
            self.weights = weights
            self._rescale()

    def _rescale(self) -> None:
        self.scaled = self.unweighted * self.weights
        self.target = self.scaled[self.target_rows]
        self.to_target = np.full(len(self.scaled), np.nan)
        self.to_seen = np.zeros(len(self.scaled))
        for a in sorted(self.seen):
            self.to_seen += self._distances(a)

    def update(self, measured: Iterable[Assignment]) -> None:
        """Add the newly measured assignments to the sums."""
        for a in sorted(set(measured) - self.seen):
            self.seen.add(a)
            self.to_seen += self._distances(a)

    def of(self, pool: Sequence[Assignment], placed: Iterable[Assignment] = ()
           ) -> np.ndarray:
        """The criterion of each assignment in ``pool`` (candidates only), counting the
        ``placed`` assignments (picked, not yet measured; not remembered) as measured."""
        idx = np.fromiter((self.index[a] for a in pool), dtype=int, count=len(pool))
        missing = idx[np.isnan(self.to_target[idx])]
        if missing.size:
            self.to_target[missing] = cdist(self.scaled[missing], self.target).mean(axis=1)
        extra = sorted(set(placed) - self.seen)
        criterion = (len(self.seen) + len(extra) + 1) * self.to_target[idx] - self.to_seen[idx]
        for a in extra:
            criterion -= self._distances(a)[idx]
        return criterion

    def _distances(self, a: Assignment) -> np.ndarray:
        """Rank-scaled distance of every candidate to ``a``."""
        i = self.index.get(a)
        row = (self.scaled[i] if i is not None
               else rank_scale(self.space, np.asarray([a], float))[0] * self.weights)
        return np.sqrt(((self.scaled - row) ** 2).sum(axis=1))


def cost_aware_pick(criterion: np.ndarray, predicted_T: np.ndarray,
                    cost_exponent: float) -> int:
    """Index of the best candidate: the smallest criterion, and among those within a
    run-time-weighted margin of it, the cheapest. The margin is the criterion's spread over
    the pool scaled by how much cheaper a run is (``cost_exponent`` 0: the smallest)."""
    best = float(np.min(criterion))
    if cost_exponent <= 0 or not np.all(np.isfinite(predicted_T)):
        return int(np.argmin(criterion))
    t = np.maximum(predicted_T, 1e-9)
    rel_cost = np.log(t / np.median(t))  # 0 for a median-cost run
    spread = float(np.median(criterion) - best)
    return int(np.argmin(criterion + cost_exponent * 0.1 * spread * rel_cost))
