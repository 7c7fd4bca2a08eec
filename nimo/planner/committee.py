"""Alternative fits of every predictor (other transform families, no interactions, the
paper's forms): where they disagree with the fitted model, the data do not pin it down.
Uncertainty sampling and the agreement stop rule read the spread."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nimo.metrics import internal_error_pct
from nimo.model import FittedPredictor
from nimo.model.support import sampled_candidates
from nimo.planner.crossval import RUN_ERROR_CAP_PCT
from nimo.predictors import PredictorOptions

if TYPE_CHECKING:
    from nimo.planner.learner import Learner

MEMBERS = (
    {"mode": "paper", "final_fit": "numpy"},
    {"mode": "auto", "log_response": False, "final_fit": "numpy"},
    {"mode": "auto", "interactions": False, "final_fit": "numpy"},
    {"mode": "auto", "transforms": ["identity", "reciprocal", "log"], "final_fit": "numpy"},
)


class Member(NamedTuple):
    """One alternative's fit of every predictor, its LOO error of T (%; None below 2
    runs) and its closed-form LOO predictions of T."""

    fits: dict[str, FittedPredictor]
    error: float | None
    loo_T: np.ndarray


Fits = list[Member]


class Committee:
    """The members' fits of one learner and their LOO error of T, cached: refitted
    whenever the data changed, but above 100 samples only every 5th sample (a slightly
    stale committee still points at where the data are thin, at a fifth of the cost)."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner
        self._cache: tuple[int, tuple[tuple[str, ...], ...], Fits] | None = None

    def fits(self) -> Fits:
        learner = self.learner
        n = learner.n
        key = tuple(tuple(v) for v in learner.active.values())
        cached = self._cache
        if cached is not None and cached[1] == key and (
                cached[0] == n or (n > 100 and n - cached[0] < 5)):
            return cached[2]
        X, T = learner.X, learner.T()
        out: Fits = []
        for variant in MEMBERS:
            opts = PredictorOptions.from_dict(variant)
            fits = {p: learner.fit_on(p, X, learner.y(p), opts)
                    for p in learner.predictor_names}
            loo = {p: fill_nan(fits[p].loo_predictions(X, learner.y(p)), learner.y(p))
                   for p in learner.predictor_names}
            loo_T = learner.combine(loo)
            out.append(Member(fits, internal_error_pct(T, loo_T) if n > 1 else None, loo_T))
        self._cache = (n, key, out)
        return out

    def predictions(self, X: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        """Predicted T at rows X by the fitted model and by every member; rows = members.
        With ``plausible_only``, members whose LOO error of T is much worse than the fitted
        model's (> max(1.5x, +2 points)) are left out."""
        learner = self.learner
        members = self.plausible() if plausible_only else self.fits()
        out = [learner.predicted_T(X)]
        out += [learner.combine({p: f.predict(X) for p, f in m.fits.items()}) for m in members]
        return np.asarray(out)

    def plausible_errors(self) -> list[float]:
        """The LOO errors of T of the members ``predictions(plausible_only=True)`` keeps,
        in its order (percent; 0 where a member has none)."""
        return [float(m.error or 0.0) for m in self.plausible()]

    def plausible(self) -> Fits:
        """The members whose LOO error of T is within max(1.5x, +2 points) of the fitted
        model's (every member while the model has none)."""
        best, _ = self.learner.loo_errors()
        if best is None:
            return self.fits()
        return [m for m in self.fits()
                if m.error is not None and m.error <= max(1.5 * best, best + 2.0)]


def spread_pct(learner: Learner, excess: bool = False,
               like_model: bool = False) -> float | None:
    """How far the plausible members' T lies from the model's over the candidates not run
    (a seeded subset of at most 1,000): the median over the members of their mean relative
    difference, each candidate's counting at most 100% (as a run's fold error does), in
    percent; 0 without a plausible member (the data rule every alternative out), None
    without a candidate left (nothing to measure it on).

    With ``excess``, each member's difference counts only beyond its own LOO error of T, in
    quadrature (``sqrt(max(gap^2 - err^2, 0))``): a member that lies as far from the model as
    it lies from the runs says more about itself than about the model.

    With ``like_model``, each member is first corrected and blended as the model is, within
    its bounds (``Learner.predicted_T(rows, fits=members)``), so the spread measures how far
    the alternatives would lie from the model had they been delivered, not how far the
    model's own correction and blend move it from a bare parametric fit. Under the blend
    ``P^(1-v) G^v`` a member's log-ratio to the model shrinks by ``1 - v``."""
    measured = {tuple(row) for row in np.round(learner.X, 9)}
    rows = sampled_candidates(learner.space.candidates)
    rows = rows[[tuple(r) not in measured for r in np.round(rows, 9)]] if len(rows) else rows
    if not len(rows):
        return None
    preds = learner.committee(rows, plausible_only=True)
    model, members = preds[0], preds[1:]
    if like_model and len(members):
        members = learner.predicted_T(rows, fits=members)
    own = (learner.committee_errors() if excess else [0.0] * len(members))
    gaps = [float(np.mean(relative_gaps(m, model))) * 100.0 for m in members]
    kept = [np.sqrt(max(g * g - e * e, 0.0))
            for g, e, m in zip(gaps, own, members, strict=True) if np.isfinite(m).all()]
    return float(np.median(kept)) if kept else 0.0


def gap_pct(learner: Learner, row: np.ndarray) -> float:
    """How far the plausible members' T lies from the model's at one candidate (``row``, a
    1-row array): the median member's relative difference, capped like ``spread_pct``'s, in
    percent; 0 without a plausible member."""
    preds = learner.committee(row, plausible_only=True)[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        gaps = relative_gaps(preds[1:], preds[0])
    kept = gaps[np.isfinite(gaps)]
    return float(np.median(kept)) * 100.0 if len(kept) else 0.0


def relative_gaps(members: np.ndarray, model: np.ndarray | float) -> np.ndarray:
    """``|member / model - 1|``, each at most ``RUN_ERROR_CAP_PCT`` (as a fraction): how far
    alternative predictions lie from the model's, counted as a run's fold error is."""
    return np.minimum(np.abs(members / model - 1.0), RUN_ERROR_CAP_PCT / 100.0)


def fill_nan(loo: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points of leverage 1 have no LOO prediction; predict them by the mean of the others."""
    bad = ~np.isfinite(loo)
    if bad.any():
        loo = loo.copy()
        others = (y.sum() - y[bad]) / max(y.size - 1, 1)
        loo[bad] = others
    return loo
