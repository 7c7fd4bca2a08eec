"""Accuracy of a campaign's model on measured cases: MAPE and interval coverage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nimo import metrics

External = Sequence[tuple[Mapping[str, float], float]]


def mape_pct(model: Any, cases: External) -> float | None:
    """``nimo.metrics.mape_pct`` of ``model`` on (assignment, measured T) pairs."""
    if model is None or not cases:
        return None
    names = list(getattr(model, "names", ()) or cases[0][0].keys())
    X = np.array([[float(a[n]) for n in names] for a, _ in cases])
    y = np.array([float(T) for _, T in cases])
    return metrics.mape_pct(y, model.predict_many(X))


def interval_coverage(model: Any, cases: External, level: float) -> float | None:
    """Fraction of (assignment, measured T) pairs inside ``model``'s ``level`` interval
    (NaN bounds count as a miss); None for models without intervals."""
    if not hasattr(model, "predict_interval") or not cases:
        return None
    inside = 0
    for assignment, T in cases:
        p = model.predict_interval(assignment, level)
        inside += bool(p.lo <= T <= p.hi)
    return inside / len(cases)
