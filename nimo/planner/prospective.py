"""Prospective errors: how far off the model predicted each training run before it ran, and
the blend's probation (``predictors.gp_probation``) built on them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from nimo.model.support import clip_to_bounds
from nimo.planner.crossval import RUN_ERROR_CAP_PCT
from nimo.records import Sample

if TYPE_CHECKING:
    from nimo.planner.learner import Learner


class Probation:
    """``predictors.gp_probation``: the unblended and the blended model's error (%) at each
    run, predicted before it ran while the folds chose a weight. Where only the run count
    lets the process in, the folds alone cannot tell a blend that follows a knee from one
    that bends a right form away from it; runs the models had to predict can."""

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.errors: list[tuple[float, float]] = []

    def note(self, unblended: float, with_blend: float) -> None:
        self.errors.append((unblended, with_blend))

    def passed(self) -> bool:
        """The blend predicted the last ``runs`` runs better on average."""
        if len(self.errors) < self.runs:
            return False
        unblended, with_blend = np.asarray(self.errors[-self.runs:], float).T
        return float(with_blend.mean()) < float(unblended.mean())


def prospective_error_pct(learner: Learner, sample: Sample) -> float | None:
    """How far off (%, at most 100) ``learner``'s fit predicts a run it has not seen; None
    unfitted. With a probation, also notes the unblended and blended model's errors."""
    if set(learner.fitted) != set(learner.predictor_names) or not sample.T > 0:
        return None
    x = np.asarray([learner.space.from_dict(sample.assignment)], float)
    if learner.options.gp_probation and learner.blend.chosen:
        _note_probation(learner, x, sample.T)
    return run_error_pct(learner.raw_T(x), sample.T, learner.delivered_bounds())


def run_error_pct(raw: np.ndarray, T: float, bounds: tuple[float, float] | None) -> float:
    """The error (%, at most 100) of the first of ``raw`` predicted T (held in ``bounds``)
    against ``T``; the cap where there is no prediction."""
    predicted = float(clip_to_bounds(raw, bounds)[0])
    if np.isnan(raw[0]) or not np.isfinite(predicted):
        return RUN_ERROR_CAP_PCT
    return min(abs(predicted - T) / T * 100, RUN_ERROR_CAP_PCT)


def _note_probation(learner: Learner, x: np.ndarray, T: float) -> None:
    """Note the unblended and the blended model's error at row x (run time T)."""
    if learner.shadow_process() is None:
        return
    bounds = learner.delivered_bounds()
    learner.probation.note(run_error_pct(learner.unblended_T(x), T, bounds),
                           run_error_pct(learner.raw_T(x, shadow=True), T, bounds))
