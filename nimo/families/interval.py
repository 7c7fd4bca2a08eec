"""A family model's prediction interval from its out-of-fold errors (numpy only).

The cross-validation that chose the family (:mod:`nimo.families.select`) predicted every
run from a fit that had not seen it. The ratios ``T / predicted`` of those predictions, on
the log scale, give a split-conformal interval: ``predicted x exp(q_lo) .. predicted x
exp(q_hi)`` with ``q_lo`` the ``floor((n + 1) a/2)``-th smallest of the n log ratios and
``q_hi`` the ``ceil((n + 1)(1 - a/2))``-th, ``a = 1 - level``. Below the n that makes those
ranks exist (19 runs at 90%) there is no interval. Equal-tailed on the log scale, so a
model that runs slow on one side keeps that side wider.

With the held-out runs' distances ``d`` to the runs their fold was fitted on
(:mod:`nimo.families.reach`), the interval also widens away from the runs (normalized
conformal): when the errors' size grows with ``d`` along the least-squares line ``|log
ratio| = b (g + d)`` (``b > 0``), the scores are ``log ratio / (g + d)`` and a row at
distance ``d`` gets ``predicted x exp(s_lo (g + d)) .. predicted x exp(s_hi (g + d))``,
``d`` no less than the nearest held-out run's (``checked_from``: nearer, the calibration saw
nothing). The line needs as many distinct held-out configurations as the interval needs
errors (19 at 90%), as repeats share their configuration's error. A row farther than every
held-out run (``checked_to``) is beyond what the calibration saw, which ``nimo predict``
says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from nimo.errors import ModelError

LEVEL = 0.90


MAX_LOG = 700.0  # exp() of more overflows: such a bound is 0 or inf


def interval_doc(log_ratios: Sequence[float] | np.ndarray, level: float = LEVEL,
                 distances: Sequence[float] | np.ndarray | None = None, configurations: int = 0
                 ) -> dict[str, Any] | None:
    """``{"level", "log_lo", "log_hi", "residuals"}`` from out-of-fold ``log(T / predicted)``
    (non-finite ones dropped), or None with too few for ``level``; with the held-out runs'
    ``distances`` (same order) from as many distinct held-out ``configurations`` as the
    interval needs errors (19 at 90%: the repeats of one configuration share its error),
    also ``"widening": {"gamma", "score_lo", "score_hi", "checked_from", "checked_to"}``
    (none when the errors do not grow with the distance)."""
    r = np.asarray(log_ratios, dtype=float)
    ok = np.isfinite(r)
    ranks = _ranks(int(ok.sum()), level)
    if ranks is None:
        return None
    lo_rank, hi_rank = ranks
    kept = np.sort(r[ok])
    doc: dict[str, Any] = {"level": level, "log_lo": float(kept[lo_rank - 1]),
                           "log_hi": float(kept[hi_rank - 1]), "residuals": int(kept.size)}
    if distances is not None and _ranks(configurations, level) is not None:
        d = np.asarray(distances, dtype=float)[ok]
        gamma = growth_offset(np.abs(r[ok]), d)
        if gamma is not None:
            scores = np.sort(r[ok] / (gamma + d))
            doc["widening"] = {"gamma": gamma, "score_lo": float(scores[lo_rank - 1]),
                               "score_hi": float(scores[hi_rank - 1]),
                               "checked_from": float(d.min()), "checked_to": float(d.max())}
    return doc


def growth_offset(size: np.ndarray, d: np.ndarray) -> float | None:
    """``g`` of the least-squares line ``size = b (g + d)`` of the errors' size over their
    distance: None when the errors do not grow with it (no widening)."""
    if d.size < 3 or not np.all(np.isfinite(d)) or np.ptp(d) <= 0:
        return None
    b, a = np.polyfit(d, size, 1)
    if b <= 0:
        return None
    return float(a / b) if a > 0 else float(np.median(d)) or None


def _ranks(n: int, level: float) -> tuple[int, int] | None:
    """The split-conformal ranks (1-based) of the lower and upper bound among ``n`` errors."""
    alpha = 1.0 - level
    # the ranks, safe from 1 - 0.9 != 0.1 in floating point
    lo_rank = math.floor((n + 1) * alpha / 2 + 1e-9)
    hi_rank = math.ceil((n + 1) * (1 - alpha / 2) - 1e-9)
    return None if lo_rank < 1 or hi_rank > n else (lo_rank, hi_rank)


def interval_of(doc: Any, predicted: float, distance: float | None = None
                ) -> tuple[float, float] | None:
    """(lo, hi) around ``predicted`` from an :func:`interval_doc`, widened for a row at
    ``distance`` from the training runs when the doc has a widening; None without an
    interval (ModelError naming the field when a file holds something else there)."""
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
    widening = checked_widening(doc)
    if widening is not None and distance is not None:
        # nearer than every held-out run: no narrower than there (the calibration saw none)
        reach = widening["gamma"] + max(distance, widening["checked_from"])
        lo, hi = widening["score_lo"] * reach, widening["score_hi"] * reach
    return (predicted * math.exp(max(-MAX_LOG, min(MAX_LOG, lo))),
            predicted * math.exp(max(-MAX_LOG, min(MAX_LOG, hi))))


def checked_widening(doc: Any) -> dict[str, float] | None:
    """``doc["widening"]`` as floats, None without one (ModelError when garbled)."""
    w = doc.get("widening")
    if w is None:
        return None
    try:
        out = {k: float(w[k]) for k in ("gamma", "score_lo", "score_hi", "checked_to")}
        out["checked_from"] = float(w.get("checked_from", 0.0))
    except (TypeError, ValueError, KeyError):
        out = {}
    if not (out and all(math.isfinite(v) for v in out.values()) and out["gamma"] > 0
            and out["score_lo"] <= out["score_hi"]
            and 0 <= out["checked_from"] <= out["checked_to"]):
        raise ModelError("corrupt family model: bad field 'training.interval.widening' "
                         "(expected finite gamma > 0, score_lo <= score_hi and "
                         "0 <= checked_from <= checked_to)")
    return out


def family_bounds(model: Any, rows: Sequence[Any], predicted: Sequence[float] | np.ndarray
                  ) -> list[tuple[float, float] | None]:
    """Each row's interval around its ``predicted`` T from a family model's
    ``training.interval``, widened for the row's distance from the runs when it widens
    (all None without an interval)."""
    from nimo.families.reach import distance

    doc = model.training.get("interval")
    if interval_of(doc, 1.0) is None:  # also checks the doc
        return [None] * len(rows)
    far: Sequence[float | None] = [None] * len(rows)
    if checked_widening(doc) is not None:
        far = [float(d) for d in distance(model.encoder, doc.get("reach"), rows)]
    return [interval_of(doc, float(p), d) for p, d in zip(predicted, far, strict=True)]
