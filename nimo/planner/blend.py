"""The fold-chosen blend of the parametric model with a Gaussian process on log T
(``predictors.gp``; :mod:`nimo.model.gp`).

The delivered T is ``P^(1-v) G^v`` with ``v = w c(x)``: P the parametric model (with its
residual correction when used), G the process conditioned on every run, ``c(x)`` the share
of G's prior variance the runs explain at x (1 near runs, 0 far from all: there P speaks
alone, as G returns to the mean log T). ``w`` is the weight in ``WEIGHTS`` whose
blend of the folds' out-of-fold predictions has the lowest error, on the same folds that
judge P, so the reported cross-validated error is the blend's (w = 0: P alone, as without
the option). The kernel is chosen on all the runs, refreshed as the residual kernel is, and
reused by every fold. Small sample sets with dense runs favour G (tuning-small suite);
large spaces keep P where it is right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nimo.model.gp import GPHyper, LogTProcess, blended
from nimo.planner.crossval import error_of
from nimo.predictors.gp import choose_hyper, fit_process

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
# a weight is taken when its fold error is below P's. It had to cut P's by a fifth (0.8), as
# the residual correction must, since the best of several noisy estimates is biased low; but
# under support points a fold's held-out run lies farther from the others than an unmeasured
# assignment does, so the folds underrate the process (benchmarks/learning/weight_probe.py).
# Tuning suites, with the variance picks: tuning-small 29.6 / 13.9 / 8.2% -> 29.6 / 13.1 /
# 7.9% after 10 / 20 / 30% of the configurations; tuning unchanged (94%, 9 runs, 3.4%)
GAIN = 1.0
Fresh = Callable[[int], bool]


class Blend:
    """The process's kernel, its out-of-fold and per-fold predictions, and the weight."""

    def __init__(self) -> None:
        self._hyper: tuple[int, GPHyper | None] | None = None
        self._process: tuple[int, LogTProcess | None] | None = None
        self.weight = 0.0
        self.chosen = 0.0  # the folds' weight, whether or not a probation holds it back
        self.oof: np.ndarray | None = None  # the last cross-validation's out-of-fold G
        self.oof_informed: np.ndarray | None = None  # ... and how far its runs inform it
        self.oof_T: np.ndarray | None = None  # the blend's out-of-fold T at the first runs

    def hyper(self, levels: Sequence[Sequence[float]], X: np.ndarray, T: np.ndarray,
              fresh: Fresh) -> GPHyper | None:
        """The kernel chosen on all the runs; reused while ``fresh(computed at)``."""
        if self._hyper is None or not fresh(self._hyper[0]):
            self._hyper = (int(T.size), choose_hyper(levels, X, T))
        return self._hyper[1]

    def fold_predictions(self, levels: Sequence[Sequence[float]], X: np.ndarray,
                         T: np.ndarray, ids: np.ndarray, hyper: GPHyper
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Out-of-fold G and informed share at every run, then each fold's at every run
        (one row per fold)."""
        k = int(ids.max()) + 1
        at_all, informed = np.full((k, T.size), np.nan), np.zeros((k, T.size))
        for f in range(k):
            process = fit_process(levels, X[ids != f], T[ids != f], hyper)
            if process is not None:
                at_all[f], informed[f] = process.predict_informed(X)
        own = (ids, np.arange(T.size))
        return at_all[own], informed[own], at_all, informed

    def fold_scores(self, levels: Sequence[Sequence[float]], X: np.ndarray, T: np.ndarray,
                    parametric: np.ndarray, fold_T: np.ndarray, ids: np.ndarray,
                    hyper: GPHyper | None, hold: Callable[[np.ndarray], np.ndarray]
                    ) -> tuple[float | None, np.ndarray]:
        """(the blend's error of the out-of-fold T, the fold models' blended T at every
        run) at the weight the folds choose for ``parametric`` (P's out-of-fold T); (None,
        ``fold_T``) at weight 0 or without a kernel."""
        self.weight, self.oof, self.oof_informed, self.oof_T = 0.0, None, None, None
        self.chosen = 0.0
        if hyper is None:
            return None, fold_T
        self.oof, self.oof_informed, at_all, informed = self.fold_predictions(
            levels, X, T, ids, hyper)
        w = self.choose(T, parametric, self.oof, self.oof_informed, hold)
        if not w:
            return None, fold_T
        self.oof_T = hold(self.out_of_fold(parametric))  # choose() set the weight to w
        return error_of(T, self.oof_T), hold(blended(fold_T, at_all, w * informed))

    def out_of_fold(self, parametric: np.ndarray) -> np.ndarray:
        """Out-of-fold ``parametric`` T blended as the last cross-validation chose."""
        if not self.weight or self.oof is None or self.oof_informed is None:
            return parametric
        return blended(parametric, self.oof, self.weight * self.oof_informed)

    def choose(self, T: np.ndarray, parametric: np.ndarray, gp: np.ndarray,
               informed: np.ndarray | float, hold: Callable[[np.ndarray], np.ndarray]
               ) -> float:
        """The weight whose blend of the out-of-fold predictions errs least (ties: the
        smaller weight); 0 where G has no prediction. Sets and returns ``weight``."""
        self.weight = 0.0
        if not np.isfinite(gp).all():
            return self.weight
        errors = {w: error_of(T, hold(blended(parametric, gp, w * informed)))
                  for w in WEIGHTS}
        scored = {w: e for w, e in errors.items() if e is not None}
        if scored and errors[0.0] is not None:
            best = min(scored, key=lambda w: (scored[w], w))
            if scored[best] < GAIN * errors[0.0]:
                self.weight = best
        self.chosen = self.weight
        return self.weight

    def hold(self) -> None:
        """Deliver the model without the process; ``chosen`` keeps the folds' weight."""
        self.weight, self.oof_T = 0.0, None

    def process(self, levels: Sequence[Sequence[float]], X: np.ndarray, T: np.ndarray,
                hyper: GPHyper | None) -> LogTProcess | None:
        """The process on every run (None while the folds' weight is 0), cached per sample
        count."""
        if not self.chosen or hyper is None:
            return None
        if self._process is None or self._process[0] != T.size:
            self._process = (int(T.size), fit_process(levels, X, T, hyper))
        return self._process[1]

    def forget(self) -> None:
        """Drop the process after a refit (the kernel stays while fresh)."""
        self._process = None
