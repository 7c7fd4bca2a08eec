"""Leave-one-out (closed form, via the hat matrix).

For OLS with design A, the LOO residual of point i is ``e_i / (1 - h_ii)`` with
``h = diag(A (A'A)^-1 A')``: exactly what refitting without point i gives. Selection of the
terms is NOT redone per left-out point, so the error is optimistic about the selection.
"""

from __future__ import annotations

import numpy as np

from nimo.metrics import fit_error_pct
from nimo.model.predictor import FittedPredictor, hat_loo

__all__ = ["hat_loo", "loo_mape", "loo_predictions"]


def loo_predictions(predictor: FittedPredictor, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """LOO predictions (original scale) of ``predictor``'s design refitted on (X, y)."""
    return predictor.loo_predictions(X, y)


def loo_mape(predictor: FittedPredictor, X: np.ndarray, y: np.ndarray,
             scale: np.ndarray | None = None) -> float:
    """``fit_error_pct`` of the LOO predictions: the error that selection ranks by (relative
    to ``scale`` when given, see ``PredictorOptions.share_errors``)."""
    return fit_error_pct(y, predictor.loo_predictions(X, y), scale)
