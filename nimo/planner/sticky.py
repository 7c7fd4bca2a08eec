"""Sticky model forms (``predictors.sticky``): after a new run, a predictor keeps its previous
form (response and terms, refitted on all the samples) unless the newly selected one cuts
the leave-one-out error by the ``sticky`` fraction. One more run does not swap the form for
another that fits the runs as well but differs away from them (tuning suite: the external
error jumped from 4% to over 100% after single runs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nimo.finite import finite_or_none
from nimo.model import FittedPredictor
from nimo.model.features import Term
from nimo.predictors.loo import loo_mape

Form = tuple[str, Sequence[Term]]  # (response, terms)


def kept_or_fresh(fresh: FittedPredictor, previous: FittedPredictor | None, sticky: float,
                  y: np.ndarray, active: Sequence[str],
                  refit: Callable[[Form], FittedPredictor],
                  error: Callable[[FittedPredictor], float | None] | None = None,
                  ) -> FittedPredictor:
    """``fresh``, or ``previous``'s form refitted (``refit``) when ``fresh`` does not cut its
    LOO error (or the figure ``error`` gives) by the fraction ``sticky``. The previous form
    stands only where it still applies: fitted on fewer samples, a log response only on
    positive targets, and only attributes still ``active``."""
    if (not sticky or previous is None or previous.n_train > y.size
            or (previous.response == "log" and not np.all(y > 0))
            or not set(previous.attributes) <= set(active)):
        return fresh
    form = (previous.response, previous.terms)
    if form == (fresh.response, fresh.terms):
        return fresh
    kept = refit(form)
    judge = error or (lambda fitted: fitted.loo_mape)
    old, new = judge(kept), judge(fresh)
    if old is None or new is None:
        return fresh
    return fresh if new < old * (1 - sticky) else kept


def by_share(X: np.ndarray, y: np.ndarray, scale: np.ndarray | None
             ) -> Callable[[FittedPredictor], float | None] | None:
    """The LOO error of an occupancy fit relative to ``scale`` (each sample's total
    occupancy: the error it makes in T, ``predictors.sticky_share``); None without a scale."""
    if scale is None:
        return None
    return lambda fitted: finite_or_none(loo_mape(fitted, X, y, scale))
