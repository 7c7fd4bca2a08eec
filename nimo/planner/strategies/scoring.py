"""Scores of candidate assignments for uncertainty sampling (pure numpy).

Both divide by the predicted run time to the power ``cost_exponent``, so a cheap run that
teaches as much is preferred.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from nimo.space import ResourceSpace


def rank_scale(space: ResourceSpace, X: np.ndarray) -> np.ndarray:
    """Each attribute's value as its position among the attribute's levels, in [0, 1]
    (interpolated between levels for values off the grid)."""
    out = np.empty_like(X, dtype=float)
    for j, attr in enumerate(space.attributes):
        levels = np.asarray(sorted(attr.levels), float)
        ranks = np.arange(len(levels), dtype=float) / max(len(levels) - 1, 1)
        out[:, j] = np.interp(X[:, j], levels, ranks)
    return out


def maximin_score(space: ResourceSpace, X: np.ndarray, seen: np.ndarray,
                  predicted_T: np.ndarray, cost_exponent: float) -> np.ndarray:
    """Cost-aware maximin: distance to the nearest measured assignment (rows of ``seen``),
    per predicted run time to the power ``cost_exponent``. Distances are in level ranks
    scaled to [0, 1], so geometric levels (20, 50, 100, 400 Mbit/s) count as evenly spread.
    Off-axis points like these expose interactions that one-at-a-time sampling cannot see."""
    scaled = rank_scale(space, X)
    seen_scaled = rank_scale(space, seen)
    d = np.sqrt(((scaled[:, None, :] - seen_scaled[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    mean = np.maximum(predicted_T, 1e-9)
    return d / mean ** cost_exponent


class MinDistance:
    """Each candidate's rank-scaled distance to the nearest measured assignment, kept up to
    date incrementally (one pass over the candidates per new measurement, so a pick costs
    O(candidates x attributes) however many runs were made)."""

    def __init__(self, space: ResourceSpace) -> None:
        self.index = {c: i for i, c in enumerate(space.candidates)}
        self.scaled = rank_scale(space, np.asarray(space.candidates, float))
        self.space = space
        self.d = np.full(len(space.candidates), np.sqrt(len(space.names)), float)
        self.seen: set[tuple[float, ...]] = set()

    def update(self, measured: set[tuple[float, ...]]) -> None:
        for a in sorted(measured - self.seen):
            self.seen.add(a)
            self.d = np.minimum(self.d, np.sqrt(((self.scaled - self._row(a)) ** 2).sum(axis=1)))

    def of(self, pool: list[tuple[float, ...]], placed: Iterable[tuple[float, ...]] = ()
           ) -> np.ndarray:
        """Each pool entry's distance to the nearest measured or ``placed`` assignment
        (placed: picked but not yet measured; not remembered)."""
        idx = [self.index[a] for a in pool]
        d = self.d[idx]
        for a in sorted(set(placed) - self.seen):
            d = np.minimum(d, np.sqrt(((self.scaled[idx] - self._row(a)) ** 2).sum(axis=1)))
        return d

    def _row(self, a: tuple[float, ...]) -> np.ndarray:
        i = self.index.get(a)
        return (self.scaled[i] if i is not None
                else rank_scale(self.space, np.asarray([a], float))[0])


def spacefill_score(distance: np.ndarray, predicted_T: np.ndarray,
                    cost_exponent: float) -> np.ndarray:
    """Distance to the nearest measurement per predicted run time ** ``cost_exponent``
    (-inf where not finite; a non-positive prediction counts as the smallest positive one)."""
    t = np.where(np.isfinite(predicted_T), predicted_T, np.nan)
    positive = t[t > 0]
    floor = float(positive.min()) if positive.size else 1.0
    t = np.where(np.isfinite(t) & (t > 0), t, floor)
    score = distance / t ** cost_exponent
    return np.where(np.isfinite(score), score, -np.inf)


def committee_spread(preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(median, relative spread) of predicted T over the committee (rows = members)."""
    mean = np.maximum(np.median(preds, axis=0), 1e-9)
    return mean, (preds.max(axis=0) - preds.min(axis=0)) / mean


def uncertainty_score(preds: np.ndarray, var: np.ndarray, cost_exponent: float) -> np.ndarray:
    """Committee spread plus the model's relative predictive sd, per predicted run time to
    the power ``cost_exponent`` (-inf where not finite)."""
    mean, spread = committee_spread(preds)
    rel_sd = np.sqrt(np.maximum(var, 0.0)) / mean
    score = (spread + rel_sd) / mean ** cost_exponent
    return np.where(np.isfinite(score), score, -np.inf)
