"""Sticky model forms (``predictors.sticky``): after a new run, a predictor keeps its previous
form (response and terms, refitted on all the samples) unless the newly selected one cuts
the leave-one-out error by the ``sticky`` fraction. One more run does not swap the form for
another that fits the runs as well but differs away from them (tuning suite: the external
error jumped from 4% to over 100% after single runs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nimo.model import FittedPredictor
from nimo.model.features import Term

Form = tuple[str, Sequence[Term]]  # (response, terms)


def kept_or_fresh(fresh: FittedPredictor, previous: FittedPredictor | None, sticky: float,
                  y: np.ndarray, active: Sequence[str],
                  refit: Callable[[Form], FittedPredictor]) -> FittedPredictor:
    """``fresh``, or ``previous``'s form refitted (``refit``) when ``fresh`` does not cut its
    LOO error by the fraction ``sticky``. The previous form stands only where it still
    applies: fitted on fewer samples, a log response only on positive targets, and only
    attributes still ``active``."""
    if (not sticky or previous is None or previous.n_train > y.size
            or (previous.response == "log" and not np.all(y > 0))
            or not set(previous.attributes) <= set(active)):
        return fresh
    form = (previous.response, previous.terms)
    if form == (fresh.response, fresh.terms):
        return fresh
    kept = refit(form)
    if kept.loo_mape is None or fresh.loo_mape is None:
        return fresh
    return fresh if fresh.loo_mape < kept.loo_mape * (1 - sticky) else kept
