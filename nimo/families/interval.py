"""A family model's prediction interval from its out-of-fold errors (numpy only).

The cross-validation that chose the family (:mod:`nimo.families.select`) predicted every
run from a fit that had not seen it. The ratios ``T / predicted`` of those predictions, on
the log scale, give a split-conformal interval: ``predicted x exp(q_lo) .. predicted x
exp(q_hi)`` with ``q_lo`` the ``floor((n + 1) a/2)``-th smallest of the n log ratios and
``q_hi`` the ``ceil((n + 1)(1 - a/2))``-th, ``a = 1 - level``. Below the n that makes those
ranks exist (19 runs at 90%) there is no interval. Equal-tailed on the log scale, so a
model that runs slow on one side keeps that side wider.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from nimo.errors import ModelError

LEVEL = 0.90


def interval_doc(log_ratios: Sequence[float] | np.ndarray, level: float = LEVEL
                 ) -> dict[str, Any] | None:
    """``{"level", "log_lo", "log_hi", "residuals"}`` from out-of-fold ``log(T / predicted)``
    (non-finite ones dropped), or None with too few for ``level``."""
    r = np.sort(np.asarray(log_ratios, dtype=float))
    r = r[np.isfinite(r)]
    n, alpha = r.size, 1.0 - level
    # the ranks, safe from 1 - 0.9 != 0.1 in floating point
    lo_rank = math.floor((n + 1) * alpha / 2 + 1e-9)
    hi_rank = math.ceil((n + 1) * (1 - alpha / 2) - 1e-9)
    if lo_rank < 1 or hi_rank > n:
        return None
    return {"level": level, "log_lo": float(r[lo_rank - 1]), "log_hi": float(r[hi_rank - 1]),
            "residuals": int(n)}


def interval_of(doc: Any, predicted: float) -> tuple[float, float] | None:
    """(lo, hi) around ``predicted`` from an :func:`interval_doc`; None without one
    (ModelError naming the field when a file holds something else there)."""
    if not doc:
        return None
    try:
        lo, hi, level = float(doc["log_lo"]), float(doc["log_hi"]), float(doc["level"])
        residuals = doc["residuals"]
    except (TypeError, ValueError, KeyError):
        lo = hi = level = math.nan
        residuals = None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi and abs(hi) < 700
            and 0 < level < 1 and isinstance(residuals, int) and residuals > 0):
        raise ModelError("corrupt family model: bad field 'training.interval' (expected "
                         "finite log_lo <= log_hi, a level in (0, 1) and residuals >= 1)")
    return predicted * math.exp(lo), predicted * math.exp(hi)
