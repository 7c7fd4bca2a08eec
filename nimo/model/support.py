"""Where a cost model has measurements: its bounds and its support (numpy only).

A model built with ``predictors.bounded`` keeps the assignments it was trained on and the
range of their run times. Predictions are held within ``bounds`` (never negative, never
non-finite); a prediction whose assignment lies far from every training assignment
(rank-scaled distance above ``FAR_FACTOR`` times the training points' median
nearest-neighbour distance) is flagged ``far`` and its interval widened in proportion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from nimo.errors import ModelError

FAR_FACTOR = 2.0


def clip_to_bounds(T: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """T held in ``[lo, hi]``; NaN and +inf become hi, -inf lo (unchanged without bounds)."""
    if bounds is None:
        return T
    lo, hi = bounds
    T = np.nan_to_num(np.asarray(T, float), nan=hi, posinf=hi, neginf=lo)
    return np.clip(T, lo, hi)


def bounds_of_runs(T: np.ndarray, factor: float) -> tuple[float, float]:
    """The range a bounded model holds a predicted T in: ``factor`` below the fastest and
    above the slowest positive, finite run T (never negative, never unlimited above a run)."""
    T = np.asarray(T, float)
    T = T[np.isfinite(T) & (T > 0)]
    if T.size == 0:
        return (0.0, float("inf"))
    return (float(T.min()) / factor, float(T.max()) * factor)


def read_range(b: Any) -> tuple[float, float]:
    """A ``[lo, hi]`` field read back with ``0 <= lo <= hi`` (ValueError naming what is
    wrong): the one reader of ``bounds`` and of each entry of ``part_bounds``."""
    try:
        lo, hi = (float(v) for v in b)
    except (TypeError, ValueError):
        raise ValueError("must be [lo, hi]") from None
    if not 0 <= lo <= hi:
        raise ValueError("must have 0 <= lo <= hi")
    return (lo, hi)


def bounds_from(b: Any) -> tuple[float, float] | None:
    """The ``bounds`` field read back (None when absent); ModelError when garbled."""
    if b is None:
        return None
    try:
        return read_range(b)
    except ValueError as e:
        raise ModelError(f"corrupt cost model: field 'bounds' {e}") from None


def part_bounds_of(targets: Mapping[str, np.ndarray], factor: float
                   ) -> dict[str, tuple[float, float]]:
    """The range a bounded model holds each predictor's prediction in, as
    :func:`bounds_of_runs` does for T: an occupancy or D that a form extrapolates into a
    corner its runs never combined (a reciprocal interaction of two capacities both at
    their smallest measured levels) stays within ``factor`` of what the runs measured. A
    target with no positive, finite value measured gets no entry (nothing to hold it near),
    so the model in memory and the one written to JSON clip the same parts."""
    ranges = {t: bounds_of_runs(v, factor) for t, v in targets.items()}
    return {t: r for t, r in ranges.items() if np.isfinite(r[1])}


def clip_parts(parts: Mapping[str, np.ndarray], bounds: Mapping[str, tuple[float, float]]
               ) -> dict[str, np.ndarray]:
    """Each part held within its ``bounds`` (a part without bounds unchanged); NaN, a
    prediction that could not be made, stays NaN."""
    return {t: np.clip(v, *bounds[t]) if t in bounds else v for t, v in parts.items()}


def part_bounds_doc(bounds: Mapping[str, tuple[float, float]]) -> dict[str, list[float]]:
    """The ``part_bounds`` field (every range is finite: :func:`part_bounds_of`)."""
    return {t: [float(lo), float(hi)] for t, (lo, hi) in bounds.items()}


def part_bounds_from(doc: Any, targets: Sequence[str]) -> dict[str, tuple[float, float]]:
    """The ``part_bounds`` field read back ({} when absent); ValueError when garbled."""
    if doc is None:
        return {}
    if not isinstance(doc, Mapping) or not set(doc) <= set(targets):
        raise ValueError(f"must map some of {', '.join(targets)} to [lo, hi]")
    out = {}
    for t, b in doc.items():
        try:
            lo, hi = read_range(b)
        except ValueError as e:
            raise ValueError(f"{t}: {e}") from None
        if not np.isfinite(hi):
            raise ValueError(f"{t}: must have a finite hi")
        out[str(t)] = (lo, hi)
    return out


def seeded_rows(n: int, limit: int, seed: int) -> np.ndarray:
    """Indices of a seeded random subset of ``limit`` of ``n`` rows (unsorted; callers keep
    at most ``limit`` rows where the cost grows with the rows)."""
    return np.random.default_rng(seed).choice(n, limit, replace=False)


def rank_scaled(levels: Sequence[Sequence[float]], X: np.ndarray,
                by_ratio: bool = False) -> np.ndarray:
    """Each column as its position among that attribute's levels, in [0, 1] on the grid
    and beyond it, in units of the grid's span, linearly off it (``by_ratio``: the larger
    of that and the distance by ratio, :func:`beyond_grid`)."""
    X = np.atleast_2d(np.asarray(X, float))
    out = np.empty_like(X)
    for j, lv in enumerate(levels):
        grid = np.asarray(sorted(lv), float) if len(lv) else np.asarray([0.0])
        x = X[:, j]
        inside = np.interp(x, grid, np.arange(grid.size) / max(grid.size - 1, 1))
        out[:, j] = inside + beyond_grid(x, grid, by_ratio)
    return out


def beyond_grid(x: np.ndarray, grid: np.ndarray, by_ratio: bool = False) -> np.ndarray:
    """How far each value lies above (> 0) or below (< 0) the sorted ``grid``, in units of
    its span: linearly, or (``by_ratio``) the larger of that and, where the grid and the
    value are positive, the logarithmic distance. A resource acts by ratios (a + b /
    capacity): half the smallest measured node count is as far off as twice the largest,
    not the twelfth of the span that a linear distance makes it."""
    above = np.maximum(x - grid[-1], 0.0)
    below = np.maximum(grid[0] - x, 0.0)
    span = float(grid[-1] - grid[0]) or 1.0
    linear_above, linear_below = above / span, below / span
    if not by_ratio or grid[0] <= 0 or grid[-1] <= grid[0]:
        return linear_above - linear_below
    log_span = float(np.log(grid[-1] / grid[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_above = np.where(above > 0, np.log(np.maximum(x, grid[-1]) / grid[-1]), 0.0)
        ratio_below = np.where((below > 0) & (x > 0), np.log(grid[0] / np.maximum(x, 1e-300)),
                               0.0)
    return (np.maximum(linear_above, ratio_above / log_span)
            - np.maximum(linear_below, ratio_below / log_span))


class Support:
    """The training assignments in rank-scaled space and their typical spacing."""

    def __init__(self, levels: Sequence[Sequence[float]], rows: ArrayLike) -> None:
        self.levels = [list(map(float, lv)) for lv in levels]
        self.rows = np.atleast_2d(np.asarray(rows, float))
        self.scaled = rank_scaled(self.levels, self.rows, by_ratio=True)
        self.spacing = _median_nn(self.scaled)

    def distance(self, X: np.ndarray) -> np.ndarray:
        """Rank-scaled distance of each row of X to the nearest training assignment (off
        the levels, by ratio where that is farther: an extrapolation to half the smallest
        measured capacity is flagged ``far``)."""
        Z = rank_scaled(self.levels, X, by_ratio=True)
        d = np.full(Z.shape[0], np.inf)
        for row in self.scaled:
            d = np.minimum(d, np.sqrt(((Z - row) ** 2).sum(axis=1)))
        return d

    def widening(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(factor >= 1 for the interval, far flag) of each row of X."""
        d = self.distance(X)
        if not np.isfinite(self.spacing) or self.spacing <= 0:
            return np.ones(d.size), np.zeros(d.size, bool)
        ratio = d / self.spacing
        return np.maximum(1.0, ratio), ratio > FAR_FACTOR

    def to_list(self) -> list[list[float]]:
        return [[float(v) for v in r] for r in self.rows]


def sampled_candidates(candidates: Sequence[Sequence[float]] | np.ndarray, limit: int = 1000
                       ) -> np.ndarray:
    """A seeded subset of at most ``limit`` of ``candidates``, as rows of floats: the share
    of the candidates with some property, estimated at a bounded cost."""
    n = len(candidates)
    if isinstance(candidates, np.ndarray) and n <= limit:  # a sample already: no copy
        return candidates.astype(float, copy=False)
    chosen = seeded_rows(n, limit, seed=0) if n > limit else range(n)
    return np.asarray([candidates[int(i)] for i in chosen], float)


def far_share(levels: Sequence[Sequence[float]], rows: ArrayLike,
              candidates: Sequence[Sequence[float]] | np.ndarray, limit: int = 1000
              ) -> float | None:
    """The share of ``candidates`` a model trained on ``rows`` flags ``far`` (estimated on a
    seeded subset of ``limit`` of them); None without a typical spacing (under 2 rows)."""
    support = Support(levels, rows)
    if not np.isfinite(support.spacing) or support.spacing <= 0 or not len(candidates):
        return None
    return float(support.widening(sampled_candidates(candidates, limit))[1].mean())


def _median_nn(Z: np.ndarray) -> float:
    if Z.shape[0] < 2:
        return float("nan")
    return float(np.median(nearest_other(Z)))


def nearest_other(Z: np.ndarray) -> np.ndarray:
    """Each row's distance to its nearest other row (inf for a single row)."""
    d2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d2, np.inf)
    return np.sqrt(d2.min(axis=1))


def support_from(d: Any, names: Sequence[str]) -> list[list[float]] | None:
    """The ``support`` field of a model's JSON (None when absent): rows of one finite
    number per attribute, in column order (ModelError naming the field otherwise)."""
    if d is None:
        return None
    rows = d if isinstance(d, list) and all(isinstance(r, list) for r in d) else None
    try:
        out = None if rows is None else [[float(v) for v in r] for r in rows]
    except (TypeError, ValueError):
        out = None
    if out is None or any(len(r) != len(names) or not np.isfinite(r).all() for r in out):
        raise ModelError(f"corrupt cost model: bad field 'support' (each row must have "
                         f"{len(names)} finite numbers: {', '.join(names)})")
    return out
