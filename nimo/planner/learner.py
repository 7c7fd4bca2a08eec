"""Training state shared by all planners: samples, predictors, their fits and errors.

Predictors are named f_a, f_n, f_d, f_D (targets o_a, o_n, o_d, D; T = f_D x (f_a+f_n+f_d)),
or a single f_T when the data records only T ("direct" kind).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from nimo.metrics import internal_error_pct
from nimo.model import CostModel, FittedPredictor
from nimo.model.equation import total_time
from nimo.model.features import Term
from nimo.model.gp import GPHyper, LogTProcess, blended
from nimo.model.residual import Hyper, ResidualField
from nimo.model.support import bounds_of_runs, clip_to_bounds, part_bounds_of
from nimo.planner.blend import Blend
from nimo.planner.committee import Committee, Member, fill_nan
from nimo.planner.crossval import (
    Folds,
    burman_corrected,
    cross_validated,
    error_of,
    fold_ids,
    still_fresh,
)
from nimo.planner.delivered import delivered_model
from nimo.planner.prospective import Probation
from nimo.planner.sticky import by_share, kept_or_fresh
from nimo.planner.targets import ALL_ROWS, PREDICTOR_NAMES, TARGET_OF, share_scale
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.predictors.prior import physical_transforms
from nimo.predictors.ratios import load_ratio_pairs
from nimo.predictors.residual import choose_hyper, fit_field, log_residuals
from nimo.records import Sample
from nimo.space import Assignment, ResourceSpace

OCCUPANCY_PREDICTORS = PREDICTOR_NAMES
DIRECT_PREDICTORS = ("f_T",)
# the residual correction is used only when it cuts the cross-validated error by a fifth (the
# better of two noisy estimates is biased low; the folds reuse the kernel chosen on all runs)
RESIDUAL_GAIN = 0.8
BOUND_FACTOR = 4.0  # a bounded model predicts T within [min T / 4, max T x 4] of its runs


class Learner:
    """Holds training samples and fitted predictors; refits and scores on demand."""

    def __init__(self, space: ResourceSpace, kind: str, reference: Assignment,
                 options: PredictorOptions) -> None:
        self.space = space
        self.kind = kind
        self.reference = reference
        self.options = options
        self._fast = dataclasses.replace(options, final_fit="numpy")  # for the folds' fits
        self.predictor_names = OCCUPANCY_PREDICTORS if kind == "occupancy" else DIRECT_PREDICTORS
        self.active: dict[str, list[str]] = {p: [] for p in self.predictor_names}
        self.samples: list[Sample] = []
        self._rows: list[tuple[float, ...]] = []
        self._y: dict[str, list[float]] = {p: [] for p in self.predictor_names}
        self.fitted: dict[str, FittedPredictor] = {}
        self.ref_values: dict[str, float] = {}
        self._levels = {a.name: a.levels for a in space.attributes}
        self.level_lists = [list(self._levels[name]) for name in space.names]
        self._physical = physical_transforms(space.attributes)
        self._ratios = load_ratio_pairs(space.attributes)
        self._loo_cache: tuple[float | None, dict[str, float | None]] | None = None
        self._loo_raw: dict[str, np.ndarray] | None = None
        self._cv_cache: tuple[int, tuple[float | None, dict[str, float | None]],
                              float | None] | None = None
        self._fixed_cache: tuple[int, float | None] | None = None
        self._hyper: tuple[int, Hyper | None] | None = None
        self._field: tuple[int, ResidualField | None] | None = None
        self.use_residual = False  # the last cross-validation found the correction better
        self._blend = Blend()  # predictors.gp: the fold-chosen blend with a GP on log T
        self.probation = Probation(options.gp_probation)  # predictors.gp_probation
        self.bounded = options.bounded
        self._committee = Committee(self)

    # -- data ------------------------------------------------------------------------
    @property
    def X(self) -> np.ndarray:
        return np.asarray(self._rows, float).reshape(len(self._rows), len(self.space.names))

    def y(self, predictor: str) -> np.ndarray:
        return np.asarray(self._y[predictor], float)

    def add(self, sample: Sample) -> None:
        self._loo_cache = self._loo_raw = None
        self.samples.append(sample)
        self._rows.append(self.space.from_dict(sample.assignment))
        for p in self.predictor_names:
            self._y[p].append(sample.target(TARGET_OF[p]))
        if not self.ref_values and self.space.from_dict(sample.assignment) == self.reference:
            self.ref_values = {p: self._y[p][-1] for p in self.predictor_names}

    def set_reference_sample(self, sample: Sample) -> None:
        self.ref_values = {p: sample.target(TARGET_OF[p]) for p in self.predictor_names}

    @property
    def n(self) -> int:
        return len(self.samples)

    # -- fitting ---------------------------------------------------------------------
    def refit(self, predictors: Sequence[str] | None = None) -> None:
        self._loo_cache = self._loo_raw = self._field = None
        self._blend.forget()
        X = self.X
        for p in predictors or self.predictor_names:
            y = self.y(p)
            fresh = self.fit_on(p, X, y, self.options)
            self.fitted[p] = self._kept_or(p, fresh, X, y)

    def fit_on(self, p: str, X: np.ndarray, y: np.ndarray, options: PredictorOptions,
               structure: tuple[str, Sequence[Term]] | None = None,
               rows: np.ndarray | slice = ALL_ROWS) -> FittedPredictor:
        """Predictor ``p`` fitted on rows X (all attributes) and targets y, the samples
        ``rows`` of the campaign's, about its reference (or all the samples' mean);
        ``structure`` (response, terms) refits a given form."""
        every = self.y(p)
        y_ref = self.ref_values.get(p, float(np.mean(every)) if every.size else 1.0)
        scale = share_scale(self._y, p) if options.share_errors else None
        return fit_predictor(TARGET_OF[p], X, y, self.space.names, self.active[p],
                             self.reference, y_ref, self._levels, options, self._physical,
                             structure=structure, ratios=self._ratios,
                             error_scale=None if scale is None else scale[rows])

    def _kept_or(self, p: str, fresh: FittedPredictor, X: np.ndarray,
                 y: np.ndarray) -> FittedPredictor:
        """``fresh`` or, with ``options.sticky``, the previous form (:mod:`.sticky`)."""
        scale = share_scale(self._y, p) if self.options.sticky_share else None
        return kept_or_fresh(fresh, self.fitted.get(p), self.options.sticky, y, self.active[p],
                             lambda form: self.fit_on(p, X, y, self.options, structure=form),
                             by_share(X, y, scale))

    def predicted_T(self, X: np.ndarray, fits: np.ndarray | None = None) -> np.ndarray:
        """``model().predict_many(X)`` without building the model and its calibration, and
        before its monotone hold (``predictors.monotone`` holds the delivered model only);
        ``fits``: other fits' parametric T at X, a row each, corrected and blended alike."""
        return clip_to_bounds(self.raw_T(X, fits=fits), self.delivered_bounds())

    def combine(self, parts: Mapping[str, np.ndarray]) -> np.ndarray:
        return total_time({TARGET_OF[p]: v for p, v in parts.items()})

    def T(self) -> np.ndarray:
        return np.asarray([s.T for s in self.samples], float)

    # -- errors ----------------------------------------------------------------------
    def loo_errors(self) -> tuple[float | None, dict[str, float | None]]:
        """Leave-one-out error of T and of each predictor's target (%), once per refit."""
        if self._loo_cache is None:
            self._loo_cache = self._loo_errors()
        return self._loo_cache

    def _loo_errors(self) -> tuple[float | None, dict[str, float | None]]:
        if self.n < 2:
            return None, {p: None for p in self.predictor_names}
        raw = self.loo_predictions()
        loo = {p: fill_nan(raw[p], self.y(p)) for p in self.predictor_names}
        per: dict[str, float | None] = {
            p: internal_error_pct(self.y(p), loo[p]) for p in self.predictor_names}
        return internal_error_pct(self.T(), self.combine(loo)), per

    def cv_errors(self, folds: int = 5,
                  corrected: bool = False) -> tuple[float | None, dict[str, float | None]]:
        """K-fold cross-validated error (terms re-selected in every fold, predictions held
        inside the model's bounds), see :mod:`nimo.planner.crossval`; ``corrected``: the
        error of T Burman-corrected for the folds training on (k-1)/k of the runs; cached
        as :meth:`_still_fresh` allows (a slightly stale estimate at a fraction of the cost)."""
        cached = self._cv_cache
        if cached is None or not self._still_fresh(cached[0]):
            cached = self._cv_cache = (self.n, *self._cross_validate(folds))
        plain, burman = cached[1], cached[2]
        return (burman, plain[1]) if corrected and burman is not None else plain

    def _cross_validate(self, folds: int) -> tuple[
            tuple[float | None, dict[str, float | None]], float | None]:
        """(the k-fold scores, the Burman-corrected error of T); decides ``use_residual``."""
        T, bounds = self.T(), self.bounds()
        cv = self.folds(self.n, folds)
        scores, fold_T = cv.scores, cv.fold_T
        corrected = error_of(T, clip_to_bounds(cv.predicted * cv.factor, bounds))
        hold = self.options.residual_hold if self.use_residual else 0.0  # stays on under it
        self.use_residual = self._residual_hyper() is not None and corrected is not None and (
            scores[0] is None or corrected < max(RESIDUAL_GAIN, hold) * scores[0])
        if self.use_residual:
            scores, fold_T = (corrected, scores[1]), clip_to_bounds(fold_T * cv.fold_factor,
                                                                    bounds)
        if self.options.gp:
            scores, fold_T = self._blend_folds(scores, fold_T, cv, folds)
        if scores[0] is None or set(self.fitted) != set(self.predictor_names):
            return scores, None
        return scores, burman_corrected(scores[0], T, fold_T, self.apparent_T())

    def fixed_form_error(self, folds: int = 5) -> float | None:
        """K-fold error of T with the delivered forms refitted in every fold instead of
        selected afresh (folds, bounds, correction and cache as :meth:`cv_errors`): blind
        to the selection, as leave-one-out is, where :meth:`cv_errors` re-selects and
        judges forms the delivered model does not have."""
        if self.n < 4 or set(self.fitted) != set(self.predictor_names):
            return None
        self.cv_errors(folds)  # decides use_residual
        cached = self._fixed_cache
        if cached is None or not self._still_fresh(cached[0]):
            cv = self.folds(self.n, folds, fixed_form=True)
            predicted = cv.predicted * cv.factor if self.use_residual else cv.predicted
            predicted = self._blend.out_of_fold(clip_to_bounds(predicted, self.bounds()))
            cached = self._fixed_cache = (
                self.n, error_of(self.T(), clip_to_bounds(predicted, self.bounds())))
        return cached[1]

    def folds(self, seed: int, folds: int = 5, fixed_form: bool = False) -> Folds:
        """The k-fold cross-validation of the whole fit with fold seed ``seed`` (the
        planner's is the sample count), the residual correction fitted in every fold
        whenever a kernel is chosen; ``fixed_form``: every fold refits the delivered
        forms."""
        X, T, bounds = self.X, self.T(), self.bounds()

        def fit(p: str, mask: np.ndarray) -> FittedPredictor:
            if fixed_form:  # a form the fold cannot pin down: the fold selects its own
                form = (self.fitted[p].response, self.fitted[p].terms)
                with contextlib.suppress(np.linalg.LinAlgError):
                    return self.fit_on(p, X[mask], self.y(p)[mask], self._fast, form, rows=mask)
            return self.fit_on(p, X[mask], self.y(p)[mask], self._fast, rows=mask)

        def combine(parts: Mapping[str, np.ndarray]) -> np.ndarray:
            return clip_to_bounds(self.combine(parts), bounds)

        hyper = self._residual_hyper()

        def correct(train: np.ndarray, in_fold: np.ndarray, rows: np.ndarray) -> np.ndarray:
            field = fit_field(self.level_lists, X[train], T[train], in_fold, hyper)
            if field is None:
                return np.ones(int(rows.sum()))
            return field.factor(X[rows])

        return cross_validated(
            X, {p: self.y(p) for p in self.predictor_names}, T, fit, combine, folds,
            seed=seed, correct=correct if hyper is not None else None)

    def apparent_T(self) -> np.ndarray:
        """The delivered model's predicted T at its own training runs."""
        return clip_to_bounds(self.raw_T(self.X), self.bounds())

    def unblended_T(self, X: np.ndarray, fits: np.ndarray | None = None) -> np.ndarray:
        """The parametric T at X (or ``fits``), residual-corrected if used; no blend, no bounds."""
        parametric = self._parametric_T(X) if fits is None else fits
        field = self.residual_field()
        return parametric if field is None else parametric * field.factor(X)

    def raw_T(self, X: np.ndarray, shadow: bool = False,
              fits: np.ndarray | None = None) -> np.ndarray:
        """The T at rows X with the residual correction and the blend, as the delivered
        model applies them (before its bounds); ``shadow``: blended at the folds' weight
        even while a probation holds it back; ``fits``: as in :meth:`predicted_T`."""
        parametric = self.unblended_T(X, fits)
        process = self.shadow_process() if shadow else self.gp_process()
        if process is None:
            return parametric
        gp, informed = process.predict_informed(X)
        weight = self._blend.chosen if shadow else self._blend.weight
        held = clip_to_bounds(parametric, self.bounds())  # a T below zero blends as the bound
        return blended(held, gp, weight * informed)

    def shadow_process(self) -> LogTProcess | None:
        """The process the folds chose a weight for, blended in or held back by a
        probation (None at weight 0)."""
        X, T = self.X, self.T()
        return self._blend.process(self.level_lists, X, T, self._gp_hyper(X, T))

    # -- the blend with a Gaussian process on log T (predictors.gp) ---------------------
    def _blend_folds(self, scores: tuple[float | None, dict[str, float | None]],
                     fold_T: np.ndarray, cv: Folds, folds: int
                     ) -> tuple[tuple[float | None, dict[str, float | None]], np.ndarray]:
        """The scores and fold models' T of the blend whose weight the folds choose
        (unchanged at weight 0)."""
        bounds, factor = self.bounds(), cv.factor if self.use_residual else 1.0
        parametric = clip_to_bounds(cv.predicted * factor, bounds)
        ids = fold_ids(self.n, min(folds, self.n), self.n)  # the folds of self.folds(n)
        X, T = self.X, self.T()
        error, blended_T = self._blend.fold_scores(
            self.level_lists, X, T, parametric, fold_T, ids, self._gp_hyper(X, T),
            lambda t: clip_to_bounds(t, bounds))
        if not self._blend.weight:
            return scores, fold_T
        if self.options.gp_probation and not self._dense_by_share() and not (
                self.probation.passed()):
            self._blend.hold()
            return scores, fold_T
        return (error, scores[1]), blended_T

    def _dense_by_share(self) -> bool:
        """The runs number ``gp_min_share`` of the candidates."""
        return self.n >= self.options.gp_min_share * len(self.space.candidates)

    def _gp_hyper(self, X: np.ndarray, T: np.ndarray) -> GPHyper | None:
        runs = self.options.gp_min_runs
        dense = self._dense_by_share() or 0 < runs <= self.n
        if not (self.options.gp and self.bounded and dense and self.fitted.keys() == set(
                self.predictor_names)):
            return None
        return self._blend.hyper(self.level_lists, X, T, self._still_fresh)

    def log_t_kernel(self) -> GPHyper | None:
        """The log-T process's kernel chosen on every run, whether or not the blend uses it."""
        return self._blend.hyper(self.level_lists, self.X, self.T(), self._still_fresh)

    @property
    def blend_weight(self) -> float:
        """The weight the delivered model gives its Gaussian process (0: none blended in)."""
        return self._blend.weight

    def gp_process(self) -> LogTProcess | None:
        """The process the delivered model blends in (None at weight 0)."""
        if not self._blend.weight:
            return None
        X, T = self.X, self.T()
        return self._blend.process(self.level_lists, X, T, self._gp_hyper(X, T))

    def _still_fresh(self, computed_at: int) -> bool:  # crossval.still_fresh at this count
        return still_fresh(computed_at, self.n)

    # -- residual correction (predictors.residual) -------------------------------------
    def _parametric_T(self, X: np.ndarray | None = None) -> np.ndarray:
        X = self.X if X is None else X
        return self.combine({p: f.predict(X) for p, f in self.fitted.items()})

    def _residual_hyper(self) -> Hyper | None:
        """The correction's kernel, chosen on all the samples: recomputed whenever the data
        changed up to 40 samples, then once the sample count grew by a tenth."""
        if not (self.options.residual and self.bounded) or set(self.fitted) != set(
                self.predictor_names):
            return None
        cached = self._hyper
        if cached is not None and self._still_fresh(cached[0]):
            return cached[1]
        r = log_residuals(self.T(), self._parametric_T())
        self._hyper = (self.n, choose_hyper(self.level_lists, self.X, r))
        return self._hyper[1]

    def residual_field(self) -> ResidualField | None:
        """The fitted correction while the cross-validation keeps it, else None."""
        if not self.use_residual:
            return None
        if self._field is None or self._field[0] != self.n:
            field = fit_field(self.level_lists, self.X, self.T(), self._parametric_T(),
                              self._residual_hyper())
            self._field = (self.n, field)
        return self._field[1]

    def bounds(self) -> tuple[float, float]:
        """The range a predicted T is held in: BOUND_FACTOR below the fastest and above
        the slowest measured run (never negative, never extrapolated without limit)."""
        return bounds_of_runs(self.T(), BOUND_FACTOR)

    def delivered_bounds(self) -> tuple[float, float] | None:  # None when unbounded
        return self.bounds() if self.bounded and self.n else None

    def part_bounds(self) -> dict[str, tuple[float, float]]:  # {} when unbounded
        """The delivered model's range for each predictor: BOUND_FACTOR beyond its targets'
        (the planner's own fits, folds and picks go unclipped)."""
        return part_bounds_of({p: self.y(p) for p in self.predictor_names},
                              BOUND_FACTOR) if self.bounded and self.n else {}

    def loo_predictions(self) -> dict[str, np.ndarray]:
        """Each predictor's closed-form LOO predictions (NaN at leverage-1 points), cached."""
        if self._loo_raw is None:
            X = self.X
            self._loo_raw = {p: self.fitted[p].loo_predictions(X, self.y(p))
                             for p in self.predictor_names}
        return self._loo_raw

    # -- committee (nimo.planner.committee) -------------------------------------------
    def committee(self, X: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        """Predicted T at rows X by the fitted model and by alternative fits of every
        predictor (:class:`nimo.planner.committee.Committee`); rows = members."""
        return self._committee.predictions(X, plausible_only)

    def committee_errors(self) -> list[float]:
        """The LOO errors of T of the members ``committee(X, plausible_only=True)`` keeps."""
        return self._committee.plausible_errors()

    def committee_members(self) -> list[Member]:  # those ``committee_errors`` describes
        return self._committee.plausible()

    # -- model -----------------------------------------------------------------------
    @property
    def blend(self) -> Blend:
        """The fold-chosen blend with the Gaussian process on log T (``predictors.gp``)."""
        return self._blend

    def model(self, training: Mapping[str, object] | None = None) -> CostModel:
        """The cost model delivered now (:func:`nimo.planner.delivered.delivered_model`)."""
        return delivered_model(self, training)
