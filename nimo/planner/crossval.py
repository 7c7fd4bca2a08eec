"""K-fold cross-validation of the whole fitting procedure (honest internal error).

Closed-form leave-one-out keeps the terms chosen on all the samples, so the selection has
seen every held-out point and the figure is optimistic. Here each fold re-runs the fitting,
term and transform selection included, on the other folds only, and predicts T at its own
points; the folds are a seeded shuffle. Over space-filling samples this estimates the error
over the candidate space, not over a few lines through a reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from nimo.metrics import internal_error_pct
from nimo.model import FittedPredictor

# A held-out run's error counts at most 100%, as a prospective error does: a fold that
# extrapolates to an extreme run it lacks can miss it many times over, where the delivered
# model, which has that run, does not (tuning suite, gen19 at 44 runs: 5-fold error 111.8%
# uncapped, 13.4% capped, external 5.1%)
RUN_ERROR_CAP_PCT = 100.0

# fit(p, train_mask) -> the predictor p fitted on the rows where train_mask is True
Fitter = Callable[[str, np.ndarray], FittedPredictor]
Combine = Callable[[Mapping[str, np.ndarray]], np.ndarray]
Scores = tuple[float | None, dict[str, float | None]]
# correct(train mask, in-fold predicted T at the train rows, rows mask) -> factor at those rows
Correct = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class Folds(NamedTuple):
    """A cross-validation's outcome. ``fold_T`` and ``fold_factor`` (one row per fold)
    hold each fold model's predicted T and correction factor at every run, its own
    training runs included: Burman's correction reads them (:func:`burman_corrected`)."""

    scores: Scores
    predicted: np.ndarray  # out-of-fold predicted T
    factor: np.ndarray  # the out-of-fold correction factor (ones without ``correct``)
    fold_T: np.ndarray
    fold_factor: np.ndarray


def fold_ids(n: int, k: int, seed: int) -> np.ndarray:
    """Fold of each of n samples: a seeded permutation dealt round-robin into k folds."""
    order = np.random.default_rng(seed).permutation(n)
    out = np.empty(n, int)
    out[order] = np.arange(n) % k
    return out


def cross_validated(
    X: np.ndarray,
    targets: Mapping[str, np.ndarray],
    T: np.ndarray,
    fit: Fitter,
    combine: Combine,
    folds: int = 5,
    seed: int = 0,
    correct: Correct | None = None,
) -> Folds:
    """The error of T and per predictor in %, the out-of-fold predicted T, and the factor
    ``correct``, fitted on each fold's training rows and their in-fold predictions, puts on
    each out-of-fold T (ones without ``correct``); see :class:`Folds`. Fewer than 4
    samples: (None, ...), NaN."""
    n = int(T.size)
    names = list(targets)
    if n < 4:
        empty = np.empty((0, n))
        return Folds((None, dict.fromkeys(names)), np.full(n, np.nan), np.ones(n), empty, empty)
    ids = fold_ids(n, min(folds, n), seed)
    k = int(ids.max()) + 1
    out = {p: np.full(n, np.nan) for p in names}
    fold_T, fold_factor = np.full((k, n), np.nan), np.ones((k, n))
    every = np.ones(n, bool)
    for f in range(k):
        test = ids == f
        fits = {p: fit(p, ~test) for p in names}
        at_all = {p: fits[p].predict(X) for p in names}
        for p in names:
            out[p][test] = at_all[p][test]
        fold_T[f] = combine(at_all)
        if correct is not None:
            fold_factor[f] = correct(~test, fold_T[f][~test], every)
    factor = fold_factor[ids, np.arange(n)]
    predicted = combine(out)
    per: dict[str, float | None] = {
        p: internal_error_pct(targets[p], out[p]) for p in names}
    return Folds((error_of(T, predicted), per), predicted, factor, fold_T, fold_factor)


def burman_corrected(cv_error: float, T: np.ndarray, fold_T: np.ndarray,
                     apparent_T: np.ndarray) -> float:
    """Burman's corrected k-fold error (Biometrika 1989): the k-fold error plus the
    delivered model's error over its own runs (``apparent_T``: its predictions there) minus
    the fold models' mean error over all the runs. A fold model trains on (k-1)/k of the
    runs and is worse than the delivered model; the correction removes that pessimism.
    Never below the delivered model's error over its own runs."""
    apparent = error_of(T, apparent_T)
    over_all = [e for e in (error_of(T, row) for row in fold_T) if e is not None]
    if apparent is None or not over_all:
        return cv_error
    return max(cv_error + apparent - float(np.mean(over_all)), apparent)


def error_of(T: np.ndarray, predicted: np.ndarray) -> float | None:
    """The error (%) of the finite out-of-fold predictions of T, each run's counting at most
    RUN_ERROR_CAP_PCT; None without any."""
    finite = np.isfinite(predicted)
    if not finite.any():
        return None
    return internal_error_pct(T[finite], predicted[finite], cap_pct=RUN_ERROR_CAP_PCT)


def still_fresh(computed_at: int, n: int) -> bool:
    """Whether a figure computed at ``computed_at`` samples serves at ``n``: up to 40 samples
    only at that count; beyond, until the sample count grew by a tenth (a slightly stale
    estimate at a fraction of the cost)."""
    return computed_at == n or (n > 40 and n - computed_at < n // 10)
