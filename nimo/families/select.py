"""Choosing a family by an honest estimate on the training runs only.

Each candidate is refitted without the runs it is judged on: leave-one-configuration-out up
to 20 distinct configurations, else 5 seeded folds of configurations. With
``extrapolate_on`` (the attribute a model must extrapolate in), the folds imitate that:
from each of the largest training levels in turn, a fit on the levels below it predicts
that level and every one above (rolling origin, every horizon; at least 3 levels always
train). The figure is the mean absolute
percentage error of those predictions; ties keep the earlier candidate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nimo.errors import NimoError
from nimo.families import learned
from nimo.families.encoding import Row, numbers
from nimo.families.interval import interval_doc
from nimo.families.model import FamilyModel, check_family, fit_family
from nimo.families.reach import held_out_distances, reach_doc
from nimo.finite import finite_or_none

AUTO_CANDIDATES = ("nimo", "paper", "product", "scaling", "ernest", "loglog2", "knn")
LOO_MAX = 20
MIN_TRAIN_LEVELS = 3


@dataclass(frozen=True)
class Choice:
    """The chosen family fitted on every training run, and each candidate's estimate (%)."""

    family: str
    model: FamilyModel
    errors: dict[str, float | None] = field(default_factory=dict)
    method: str = "loo"


def folds(rows: Sequence[Row], extrapolate_on: str | None = None, seed: int = 0
          ) -> tuple[str, list[tuple[np.ndarray, np.ndarray]]]:
    """(method, [(train indices, test indices)]); repeated runs of one configuration stay
    on the same side (the groups are the distinct rows)."""
    if extrapolate_on is not None:
        x = numbers(rows, extrapolate_on)
        levels = np.unique(x)
        held = levels[max(MIN_TRAIN_LEVELS, len(levels) // 2):]
        if held.size:
            return "extrapolate", [(np.where(x < v)[0], np.where(x >= v)[0]) for v in held]
    keys = [_key(r) for r in rows]
    group_of = {k: g for g, k in enumerate(dict.fromkeys(keys))}
    groups = np.array([group_of[k] for k in keys])
    g = len(group_of)
    if g <= LOO_MAX:
        method, parts = "loo", [np.array([i]) for i in range(g)]
    else:
        method = "5-fold"
        parts = np.array_split(np.random.default_rng([seed, 12]).permutation(g), 5)
    return method, [(np.where(~np.isin(groups, p))[0], np.where(np.isin(groups, p))[0])
                    for p in parts]


def _key(row: Row) -> tuple[tuple[str, str], ...]:
    """A configuration's identity: its repeated runs share it."""
    return tuple(sorted((k, str(v)) for k, v in row.items()))


def fold_errors(family: str, rows: Sequence[Row], T: np.ndarray, splits: Sequence[
        tuple[np.ndarray, np.ndarray]], **attrs: Sequence[str]) -> tuple[float | None, np.ndarray]:
    """(MAPE (%) of ``family`` refitted per split and scored on the split's held-out runs,
    their ``log(T / predicted)``); (None, none) when a fit fails (too few runs for the form,
    a value it cannot take)."""
    try:
        predicted = _fold_predictions(family, rows, T, splits, attrs)
    except (NimoError, ValueError, np.linalg.LinAlgError):
        return None, np.empty(0)
    errs: list[float] = []
    ratios: list[float] = []
    for (_, test), pred in zip(splits, predicted, strict=True):
        errs.extend((np.abs(pred - T[test]) / T[test]).tolist())
        with np.errstate(divide="ignore", over="ignore"):
            ratios.extend(np.log(T[test] / pred).tolist())
    mape = finite_or_none(100.0 * float(np.mean(errs))) if errs else None
    return mape, np.asarray(ratios)


def _fold_predictions(family: str, rows: Sequence[Row], T: np.ndarray,
                      splits: Sequence[tuple[np.ndarray, np.ndarray]],
                      attrs: dict[str, Sequence[str]]) -> list[np.ndarray]:
    """Each split's held-out predictions by ``family`` refitted on the split's training
    runs; a scikit-learn family on PARALLEL_RUNS or more runs spreads the splits over every
    core (each fit then has fewer runs than spread its own grid search)."""
    def one(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        m = fit_family(family, [rows[i] for i in train], T[train], **attrs)
        return np.asarray(m.predict([rows[i] for i in test]))

    if family in learned.LEARNED and len(rows) >= learned.PARALLEL_RUNS and len(splits) > 1:
        from joblib import Parallel, delayed

        return list(Parallel(n_jobs=-1)(delayed(one)(tr, te) for tr, te in splits))
    return [one(train, test) for train, test in splits]


def honest_error(family: str, rows: Sequence[Row], T: np.ndarray, splits: Sequence[
        tuple[np.ndarray, np.ndarray]], **attrs: Sequence[str]) -> float | None:
    """The MAPE (%) of :func:`fold_errors` alone."""
    return fold_errors(family, rows, T, splits, **attrs)[0]


def family_interval(model: FamilyModel, rows: Sequence[Row], log_ratios: np.ndarray,
                    splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any] | None:
    """The 90% interval of ``model`` from its out-of-fold errors over ``splits``, widening
    with the distance from the runs (:mod:`nimo.families.reach`) when there is one."""
    reach = reach_doc(model.encoder, rows)
    distances = held_out_distances(model.encoder, reach, rows, splits) \
        if log_ratios.size else None
    # a configuration predicted by two splits' fits makes two errors (rolling origins)
    held = sum(len({_key(rows[int(i)]) for i in test}) for _, test in splits)
    doc = interval_doc(log_ratios, distances=distances, configurations=held)
    if doc is not None and "widening" in doc:
        doc["reach"] = reach
    return doc


def choose_family(candidates: Sequence[str], rows: Sequence[Row],
                  T: Sequence[float] | np.ndarray, *,
                  numeric: Sequence[str], categorical: Sequence[str] = (),
                  load: Sequence[str] = (), extrapolate_on: str | None = None,
                  seed: int = 0) -> Choice:
    """The candidate with the lowest honest estimate, fitted on all runs; its training
    summary keeps how it was chosen, every candidate's estimate and, from its out-of-fold
    errors, a 90% interval (:mod:`nimo.families.interval`)."""
    y = np.asarray(T, dtype=float).reshape(-1)
    attrs = {"numeric": tuple(numeric), "categorical": tuple(categorical), "load": tuple(load)}
    method, splits = folds(rows, extrapolate_on, seed)
    scored = {check_family(c): fold_errors(c, rows, y, splits, **attrs) for c in candidates}
    errors = {c: mape for c, (mape, _) in scored.items()}
    ranked = [c for c in candidates if errors[c] is not None]
    best = min(ranked, key=lambda c: errors[c] or 0.0) if ranked else candidates[0]
    model = fit_family(best, rows, y, **attrs)
    interval = family_interval(model, rows, scored[best][1], splits)
    training = {**model.training, "chosen_by": method, "honest_error_pct": errors,
                **({"interval": interval} if interval else {})}
    return Choice(best, dataclasses.replace(model, training=training), errors, method)
