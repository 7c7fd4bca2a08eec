"""Monotone bounds: a predicted T held near the runs an assignment has more or less of.

An assignment that has at least a run's capacity in every attribute (and at most its load
and latency; the same level of an unordered attribute) should not take much longer than
that run took, nor much less time than a run it has less of. A fitted form can break this
far from the runs that pin it down: a term ``mem * (1 / disk)`` under a log response, fitted
where the large memory was measured on the fast disk only, predicted the slow disk with the
most memory 22x too slow (tuning gen483 seed 2, external MAPE 87.7%). The bound holds a
prediction within ``kappa`` of those runs' measured T::

    max{T_r : r has at least c's capacity} / kappa  <=  T(c)  <=  kappa * min{T_r : c has
    at least r's capacity}

It holds only while the runs themselves agree: when one run with at least another's
capacity took more than ``kappa`` times as long (a block size is no capacity; a scale-out
can slow a job), there is no bound. Real runs break monotony by more than 1.5x rarely:
0.7% of the ordered pairs of Scout's configurations, at most 2.15x. Imports only numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

KAPPA = 1.5


def signs_of(attributes: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """+1 where more of an attribute means less time (a capacity), -1 where it means more
    (a load, a latency), 0 where its levels have no order (a categorical attribute)."""
    return np.array([0.0 if a.get("categories") else float(a.get("direction", 1))
                     for a in attributes])


def covers(X: np.ndarray, runs: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """``out[i, j]``: row i has at least run j's capacity in every attribute (an unordered
    attribute at the same level)."""
    out = np.ones((X.shape[0], runs.shape[0]), bool)
    for k, s in enumerate(signs):
        gap = X[:, k, None] - runs[None, :, k]
        out &= (gap == 0) if s == 0 else (gap * s >= 0)
    return out


@dataclass(frozen=True, eq=False)
class MonotoneBound:
    """The runs (rows in attribute order), their measured T and the attributes' signs."""

    runs: np.ndarray
    T: np.ndarray
    signs: np.ndarray
    kappa: float = KAPPA

    def limits(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) T each row of X may take; 0 and inf where no run bounds it."""
        X = np.atleast_2d(np.asarray(X, float))
        above = covers(X, self.runs, self.signs)  # row has more than the run: not slower
        below = covers(self.runs, X, self.signs).T  # the run has more than the row
        hi = np.where(above, self.T[None, :], np.inf).min(axis=1) * self.kappa
        lo = np.where(below, self.T[None, :], 0.0).max(axis=1) / self.kappa
        return lo, hi

    def hold(self, X: np.ndarray, T: np.ndarray) -> np.ndarray:
        """T at rows X held within the limits (NaN stays NaN)."""
        lo, hi = self.limits(X)
        return np.minimum(np.maximum(np.asarray(T, float), lo), hi)

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": float(self.kappa), "T": [float(t) for t in self.T]}


def monotone_bound(runs: np.ndarray, T: np.ndarray, signs: np.ndarray,
                   kappa: float = KAPPA) -> MonotoneBound | None:
    """The bound over these runs, or None when they break it (or cannot give one)."""
    runs, T = np.atleast_2d(np.asarray(runs, float)), np.asarray(T, float)
    if T.size == 0 or not np.all(np.isfinite(T) & (T > 0)):
        return None
    more = covers(runs, runs, signs)  # i has at least j's capacity: T_i <= kappa T_j
    if np.any(more & (T[:, None] > kappa * T[None, :])):
        return None
    return MonotoneBound(runs, T, np.asarray(signs, float), float(kappa))


def monotone_from(d: Any, support: list[list[float]] | None,
                  attributes: Sequence[Mapping[str, Any]]) -> MonotoneBound | None:
    """A stored bound (``{"kappa", "T"}``, one T per support row), or None when absent."""
    if d is None:
        return None
    if not isinstance(d, Mapping) or support is None:
        raise ValueError("expected {kappa, T} beside a support")
    T = np.asarray(d["T"], float)
    kappa = float(d["kappa"])
    if T.shape != (len(support),) or not np.all(np.isfinite(T) & (T > 0)) or not kappa >= 1:
        raise ValueError("one positive T per support row and kappa >= 1")
    return MonotoneBound(np.asarray(support, float), T, signs_of(attributes), kappa)
