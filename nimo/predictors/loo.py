"""Leave-one-out (closed form, via the hat matrix) and the error measure.

For OLS with design A, the LOO residual of point i is ``e_i / (1 - h_ii)`` with
``h = diag(A (A'A)^-1 A')``: exactly what refitting without point i gives. Selection of the
terms is NOT redone per left-out point, so the error is optimistic about the selection.
"""

from __future__ import annotations

import numpy as np

from nimo.model.predictor import FittedPredictor, hat_loo

__all__ = ["ape_weights", "hat_loo", "loo_mape", "loo_predictions", "mape"]

FLOOR = 1e-3  # denominators of the APE are at least 0.1% of mean |y|


def mape(y: np.ndarray, yhat: np.ndarray) -> float:
    """Mean absolute percentage error (in %) of the finite pairs.

    Denominators are ``max(|y_i|, 0.001 * mean|y|)`` so zero actuals (o_d = 0 is common) do
    not make it infinite (if every y is 0 they are 1). NaN if no finite pair remains.
    """
    y = np.asarray(y, dtype=float).reshape(-1)
    yhat = np.asarray(yhat, dtype=float).reshape(-1)
    ok = np.isfinite(y) & np.isfinite(yhat)
    if not ok.any():
        return float("nan")
    return float(100.0 * np.mean(ape_weights(y[ok]) * np.abs(y[ok] - yhat[ok])))


def ape_weights(y: np.ndarray) -> np.ndarray:
    """``1 / max(|y|, floor)`` used by :func:`mape` (all ones if every y is 0, so the
    "percentage" is then 100 x the absolute error)."""
    a = np.abs(y)
    floor = FLOOR * a.mean()
    if floor <= 0:
        return np.ones_like(a)
    return 1.0 / np.maximum(a, floor)


def loo_predictions(predictor: FittedPredictor, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """LOO predictions (original scale) of ``predictor``'s design refitted on (X, y)."""
    return predictor.loo_predictions(X, y)


def loo_mape(predictor: FittedPredictor, X: np.ndarray, y: np.ndarray) -> float:
    return mape(y, predictor.loo_predictions(X, y))
