"""The error measures, each with one name and one function (numpy only).

Three measures, because they answer three questions:

- ``mape_pct``: the accuracy reported to a user (external, holdout): mean |T' - T| / T of
  measured run times, which are positive; no floor (``median_ape_pct``: its median, shown
  beside it where a few runs far off would hide how the rest fare).
- ``internal_error_pct``: the planner's own error estimate (leave-one-out or test set) that
  the stop rule reads; denominators floored at 5% of mean |actual| so that a near-zero
  occupancy (o_d of a CPU-bound task) does not make the figure explode.
- ``fit_error_pct``: the error that ranks candidate terms and transforms while fitting a
  predictor; finite pairs only, denominators floored at 0.1% of mean |y|.
"""

from __future__ import annotations

import numpy as np

from nimo.finite import finite_or_none

INTERNAL_FLOOR = 0.05
FIT_FLOOR = 1e-3


def mape_pct(actual: np.ndarray, predicted: np.ndarray) -> float | None:
    """Mean absolute percentage error in %; None when empty or not finite."""
    y = np.asarray(actual, dtype=float)
    if y.size == 0:
        return None
    err = np.abs(np.asarray(predicted, dtype=float) - y) / np.abs(y)
    return finite_or_none(np.mean(err) * 100.0)


def median_ape_pct(actual: np.ndarray, predicted: np.ndarray) -> float | None:
    """Median absolute percentage error in %; None when empty or not finite."""
    y = np.asarray(actual, dtype=float)
    if y.size == 0:
        return None
    return finite_or_none(np.median(np.abs(np.asarray(predicted, dtype=float) - y) / np.abs(y))
                          * 100.0)


def internal_error_pct(actual: np.ndarray, predicted: np.ndarray,
                       cap_pct: float | None = None) -> float:
    """MAPE in % with denominators floored at 5% of mean |actual| (NaN when empty); with
    ``cap_pct``, each point's error counts at most that much (:func:`internal_apes`)."""
    ape = internal_apes(actual, predicted, cap_pct)
    return float(np.mean(ape)) if ape.size else float("nan")


def internal_apes(actual: np.ndarray, predicted: np.ndarray,
                  cap_pct: float | None = None) -> np.ndarray:
    """Each point's error (%) as :func:`internal_error_pct` counts it: denominators floored
    at 5% of mean |actual|, each at most ``cap_pct`` when given."""
    actual = np.asarray(actual, float)
    predicted = np.asarray(predicted, float)
    if actual.size == 0:
        return np.empty(0)
    floor = max(INTERNAL_FLOOR * float(np.mean(np.abs(actual))), 1e-12)
    ape = np.abs(actual - predicted) / np.maximum(np.abs(actual), floor) * 100.0
    return ape if cap_pct is None else np.minimum(ape, cap_pct)


def fit_error_pct(y: np.ndarray, yhat: np.ndarray, scale: np.ndarray | None = None) -> float:
    """MAPE in % of the finite pairs, denominators ``max(|y_i|, 0.001 * mean|y|)`` (all 1
    when every y is 0; ``scale`` in place of y: the errors relative to it); NaN when no
    finite pair remains."""
    y = np.asarray(y, dtype=float).reshape(-1)
    yhat = np.asarray(yhat, dtype=float).reshape(-1)
    base = y if scale is None else np.asarray(scale, dtype=float).reshape(-1)
    ok = np.isfinite(y) & np.isfinite(yhat)
    if not ok.any():
        return float("nan")
    return float(100.0 * np.mean(fit_error_weights(base[ok]) * np.abs(y[ok] - yhat[ok])))


def fit_error_weights(y: np.ndarray) -> np.ndarray:
    """``1 / max(|y|, floor)``: the weights of :func:`fit_error_pct` (weighted fits use
    them too)."""
    a = np.abs(y)
    floor = FIT_FLOOR * a.mean()
    if floor <= 0:
        return np.ones_like(a)
    return 1.0 / np.maximum(a, floor)
