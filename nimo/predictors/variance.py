"""A run's noise proportional to its run time: the residual variance of an identity-response
fit taken relative to the fitted value.

Run times scatter by a share of themselves (a 2% jitter is 0.2 s on a 10 s run, 2 s on a
100 s one), and an occupancy such as ``o_n ~ 1/bandwidth`` spans orders of magnitude over
a space. Ordinary least squares on such a target leaves one residual variance, set by the
largest values, that the interval of a small value then carries whole: on the lab's
checksum data a 90% interval of +-30% where the model is 3% off (issue 9, item 4). This
keeps the OLS coefficients (no prediction changes) and models the noise as
``Var e_i = s2 * yhat_i^2``:

- ``s2 = sum e_i^2 / sum (1 - h_i) yhat_i^2`` (``h_i`` the leverages: an unbiased pooled
  estimate under that model, robust to fitted values near zero);
- the coefficients' covariance the sandwich ``B A' diag(s2 yhat^2) A B``, ``B = (A'A)^-1``;
- a new run at ``x`` then has variance ``a' C a + s2 yhat(x)^2``
  (``FittedPredictor.predict_var``).

A log response already has relative noise and keeps its constant variance on the log scale.
"""

from __future__ import annotations

import numpy as np

from nimo.model.predictor import CONSTANT, RELATIVE

__all__ = ["CONSTANT", "RELATIVE", "relative_noise"]


def relative_noise(A: np.ndarray, r: np.ndarray, params: np.ndarray
                   ) -> tuple[np.ndarray, float] | None:
    """(coefficient covariance, s2) of the OLS fit ``params`` of ``r`` on ``A`` under
    noise proportional to the fitted value; None where that is undefined (no residual
    degrees of freedom, a singular design, fitted values all zero)."""
    n, p = A.shape
    if n <= p:
        return None
    try:
        B = np.linalg.inv(A.T @ A)
    except np.linalg.LinAlgError:
        return None
    fitted = A @ params
    leverage = np.einsum("ij,jk,ik->i", A, B, A)
    scale = float(np.sum((1.0 - leverage) * fitted**2))
    resid = r - fitted
    if not (scale > 0 and np.all(np.isfinite(resid))):
        return None
    s2 = float(resid @ resid) / scale
    meat = (A * (s2 * fitted**2)[:, None]).T @ A
    cov = B @ meat @ B
    if not np.all(np.isfinite(cov)):
        return None
    return cov, s2
