"""The cost model a learner delivers: its fitted predictors, bounds, support, residual
correction and blend (:class:`nimo.model.CostModel`), calibrated on its own out-of-sample
residuals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from nimo.metrics import internal_error_pct
from nimo.model import CostModel, attributes_as_dicts
from nimo.model.average import MemberAverage, averaged
from nimo.model.calibration import CV, LOO, MIN_CALIBRATION_RUNS, calibration_of
from nimo.model.monotone import MonotoneBound, monotone_bound, signs_of
from nimo.planner.committee import Member, fill_nan
from nimo.planner.targets import TARGET_OF

if TYPE_CHECKING:
    from nimo.planner.learner import Learner


def delivered_model(learner: Learner, training: Mapping[str, object] | None = None
                    ) -> CostModel:
    """``learner``'s model now, with ``training`` (campaign facts) recorded in it."""
    bounds = learner.delivered_bounds()
    model = CostModel(
        attributes=attributes_as_dicts(learner.space.attributes),
        reference=learner.space.as_dict(learner.reference),
        kind=learner.kind,
        predictors={TARGET_OF[p]: learner.fitted[p] for p in learner.predictor_names},
        training=dict(training or {}),
        bounds=bounds,
        part_bounds={TARGET_OF[p]: b for p, b in learner.part_bounds().items()},
        support=None if bounds is None else learner.X.tolist(),
        residual=learner.residual_field(),
        gp=learner.gp_process(),
        gp_weight=learner.blend_weight,
        monotone=monotone_of(learner),
        average=member_average(learner),
    )
    return model.calibrated(calibration(learner, model))


_MONOTONE: WeakKeyDictionary[Learner, tuple[int, MonotoneBound | None]] = WeakKeyDictionary()


def monotone_of(learner: Learner) -> MonotoneBound | None:
    """The delivered model's hold near its runs (``predictors.monotone``; None when off,
    unbounded or where the runs break it), computed once per run count. Only the model a
    campaign hands over is held: the planner's picks, committee and stop read the model
    before the hold, so the option changes no run."""
    if not (learner.options.monotone and learner.bounded and learner.n):
        return None
    cached = _MONOTONE.get(learner)
    if cached is None or cached[0] != learner.n:
        signs = signs_of(attributes_as_dicts(learner.space.attributes))
        cached = _MONOTONE[learner] = (learner.n, monotone_bound(learner.X, learner.T(), signs))
    return cached[1]


def calibration(learner: Learner, model: CostModel) -> dict[str, object]:
    """Sorted studentized LOO residuals of T, ``|T_i - T_(-i)| / sd_i`` (leverage-1 points
    left out): the model widens too narrow intervals to their quantile. A model blended
    with its process gives T the parametric sd does not describe: its residuals are the
    blend's out-of-fold ones (the runs of the last cross-validation), whose quantile is the
    interval (``nimo.model.calibration.CV``)."""
    if learner.n < MIN_CALIBRATION_RUNS:
        return {}
    _, var, _ = model.delivered_var_many(learner.X)
    members, oof = averaged_members(learner), learner.blend.oof_T
    if learner.blend_weight and oof is not None and oof.size <= learner.n:
        k = oof.size
        return calibration_of(CV, learner.T()[:k], averaged_loo(members, oof, k), var[:k])
    loo = averaged_loo(members, learner.combine(learner.loo_predictions()), learner.n)
    return calibration_of(LOO, learner.T(), loo, var)


# with fewer runs the members are fits of one or two points: nothing to average
MIN_AVERAGE_RUNS = 3


def averaged_members(learner: Learner) -> list[Member]:
    """The committee's plausible members the delivered model averages with
    (``predictors.committee_mean``; none when off or below MIN_AVERAGE_RUNS)."""
    if not (learner.options.committee_mean and learner.n >= MIN_AVERAGE_RUNS):
        return []
    return learner.committee_members()


def member_average(learner: Learner) -> MemberAverage | None:
    """The delivered model's average over ``averaged_members`` (None without one)."""
    members = averaged_members(learner)
    if not members:
        return None
    return MemberAverage(tuple({TARGET_OF[p]: f for p, f in m.fits.items()} for m in members))


def averaged_loo(members: Sequence[Member], predicted: np.ndarray, k: int) -> np.ndarray:
    """The model's out-of-sample T at its first ``k`` runs (``predicted``), averaged as the
    delivered model averages (the ``members``' closed-form LOO T); unchanged without any."""
    if not members:
        return predicted
    rows = np.asarray([m.loo_T[:k] for m in members])
    return averaged(predicted, np.where(rows > 0, rows, np.nan))


def average_error_ratio(learner: Learner) -> float:
    """The averaged model's LOO error of T over the model's own (1 when it does not
    average; within [0.5, 2]): the internal error of the model delivered."""
    members = averaged_members(learner)
    if not members:
        return 1.0
    T = learner.T()
    own = learner.combine({p: fill_nan(v, learner.y(p))
                           for p, v in learner.loo_predictions().items()})
    base = internal_error_pct(T, own)
    mean = internal_error_pct(T, averaged_loo(members, own, learner.n))
    if not (np.isfinite(base) and np.isfinite(mean)) or base <= 0:
        return 1.0
    return float(np.clip(mean / base, 0.5, 2.0))
