"""How a cost model's intervals are calibrated: the studentized residuals of runs it
predicted out of sample (numpy only)."""

from __future__ import annotations

from typing import Any

import numpy as np

# calibration methods -> the runs their residuals come from (as `nimo predict` names them)
LOO, HOLDOUT, EXTERNAL = "loo-studentized", "holdout-studentized", "external-test-studentized"
CV = "cv-studentized"  # a blended model's out-of-fold residuals: their quantile is the interval
CALIBRATION_SOURCES = {LOO: "loo", HOLDOUT: "holdout", EXTERNAL: "external-test",
                       CV: "cross-validation"}
MIN_CALIBRATION_RUNS = 3


def calibration_of(method: str, T: np.ndarray, predicted: np.ndarray,
                   var: np.ndarray) -> dict[str, Any]:
    """``{"method", "z"}`` with ``z`` the sorted ``|T - predicted| / sqrt(var)`` over runs with
    a finite prediction and a finite, positive variance; ``{}`` when fewer than
    ``MIN_CALIBRATION_RUNS`` qualify."""
    T, predicted, var = (np.asarray(a, dtype=float) for a in (T, predicted, var))
    ok = np.isfinite(T) & np.isfinite(predicted) & np.isfinite(var) & (var > 0)
    if ok.sum() < MIN_CALIBRATION_RUNS:
        return {}
    z = np.sort(np.abs(T[ok] - predicted[ok]) / np.sqrt(var[ok]))
    return {"method": method, "z": [float(v) for v in z]}
