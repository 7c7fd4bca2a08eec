"""Accuracy of a campaign's model on measured cases (MAPE, interval coverage), and the knobs
whose effect no successful run measured."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimo import metrics

External = Sequence[tuple[Mapping[str, float], float]]


def measured_and_predicted(model: Any, cases: External) -> tuple[np.ndarray, np.ndarray]:
    """The measured T of (assignment, measured T) pairs and ``model``'s predictions there."""
    names = list(getattr(model, "names", ()) or cases[0][0].keys())
    X = np.array([[float(a[n]) for n in names] for a, _ in cases])
    return np.array([float(T) for _, T in cases]), model.predict_many(X)


def mape_pct(model: Any, cases: External) -> float | None:
    """``nimo.metrics.mape_pct`` of ``model`` on (assignment, measured T) pairs."""
    if model is None or not cases:
        return None
    return metrics.mape_pct(*measured_and_predicted(model, cases))


def holdout_shift(model: Any, cases: External) -> dict[str, float | None]:
    """How uniformly the measured T lies off the model's predictions: ``holdout_shift_pct``,
    the median ratio measured / predicted as a signed percentage (+20: the runs took 20%
    longer than predicted); ``holdout_shift_share``, the share of runs on that side; and
    ``holdout_mape_unshifted_pct``, the MAPE once the predictions are scaled by that ratio.
    Holdout assignments are drawn at random, so a model that fits its training runs is off
    on either side of them; nearly all runs off by a similar factor points at the hosts'
    conditions having changed since learning (drift), not at the model's shape."""
    none: dict[str, float | None] = dict.fromkeys(
        ("holdout_shift_pct", "holdout_shift_share", "holdout_mape_unshifted_pct"))
    if model is None or not cases:
        return none
    y, predicted = measured_and_predicted(model, cases)
    ok = np.isfinite(predicted) & (predicted > 0) & (y > 0)
    if not ok.any():
        return none
    log_ratio = np.log(y[ok] / predicted[ok])
    ratio = float(np.exp(np.median(log_ratio)))
    above, below = float(np.mean(log_ratio > 0)), float(np.mean(log_ratio < 0))
    share = above if ratio > 1.0 else below if ratio < 1.0 else max(above, below)
    return {"holdout_shift_pct": 100.0 * (ratio - 1.0), "holdout_shift_share": share,
            "holdout_mape_unshifted_pct": metrics.mape_pct(y, predicted * ratio)}


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


@dataclass(frozen=True)
class Unmeasured:
    """A knob measured at ``ok_levels`` only: every run at ``failed_levels`` failed."""

    knob: str
    ok_levels: tuple[float, ...]
    failed_levels: tuple[float, ...]
    failed_runs: int

    def warning(self) -> str:
        at = ", ".join(f"{v:g}" for v in self.failed_levels)
        only = ", ".join(f"{v:g}" for v in self.ok_levels) or "no level"
        return (f"knob {self.knob} was never measured: all {self.failed_runs} runs with "
                f"{self.knob} in {{{at}}} failed (successful runs only at {only}); the model "
                "cannot know its effect")


def unmeasured_knobs(runs: Iterable[tuple[Mapping[str, float], bool]]) -> list[Unmeasured]:
    """Knobs whose successful runs saw at most one level while failed runs tried others:
    every run that varied the knob failed. ``runs`` are (assignment, succeeded) pairs."""
    ok: dict[str, set[float]] = {}
    bad: dict[str, dict[float, int]] = {}
    for assignment, succeeded in runs:
        for k, v in assignment.items():
            if succeeded:
                ok.setdefault(k, set()).add(float(v))
            else:
                bad.setdefault(k, {}).setdefault(float(v), 0)
                bad[k][float(v)] += 1
    out = []
    for k in sorted(set(ok) | set(bad)):
        levels = ok.get(k, set())
        failed = {v: n for v, n in bad.get(k, {}).items() if v not in levels}
        if len(levels) <= 1 and failed:
            out.append(Unmeasured(k, tuple(sorted(levels)), tuple(sorted(failed)),
                                  sum(failed.values())))
    return out


@dataclass(frozen=True)
class Extrapolated:
    """A knob whose training runs spanned ``measured`` (lowest, highest level) while the
    space also holds ``beyond``: the model extrapolates there, and an internal error
    cross-validated over the runs cannot see how well."""

    knob: str
    measured: tuple[float, float]
    beyond: tuple[float, ...]

    def warning(self) -> str:
        shown = ", ".join(f"{v:g}" for v in self.beyond[:3])
        more = f" and {len(self.beyond) - 3} more" if len(self.beyond) > 3 else ""
        lo, hi = self.measured
        span = f"{lo:g}" if lo == hi else f"{lo:g} .. {hi:g}"
        return (f"knob {self.knob} was measured at {span} only; predictions at {shown}{more} "
                "extrapolate, and the internal error does not cover them")


@dataclass(frozen=True)
class UnmeasuredLevels:
    """A knob's ``levels`` (each with the share of the candidates holding it) between its
    measured values that no training run held (``training.unmeasured_levels``): the model
    interpolates there, and an internal error cross-validated over the runs cannot see how
    well."""

    knob: str
    levels: tuple[tuple[float, float], ...]

    def warning(self) -> str:
        shown = ", ".join(f"{v:g} ({s:.0%} of the candidates)" for v, s in self.levels[:3])
        more = f" and {len(self.levels) - 3} more" if len(self.levels) > 3 else ""
        return (f"knob {self.knob}: {shown}{more} never measured; predictions there "
                "interpolate between measured levels, and the internal error does not "
                "cover them")


def unmeasured_levels(model: object) -> list[UnmeasuredLevels]:
    """A model's (document or loaded) ``training.unmeasured_levels``, the readable entries
    of it: [level, share] pairs of finite numbers with the share in [0, 1]."""
    record = training_record(model).get("unmeasured_levels")
    if not isinstance(record, Mapping):
        return []
    out = []
    for knob, pairs in record.items():
        read = [finite_numbers(p) for p in (pairs if isinstance(pairs, list) else [])]
        levels = tuple((p[0], p[1]) for p in read if len(p) == 2 and 0 <= p[1] <= 1)
        if levels:
            out.append(UnmeasuredLevels(str(knob), levels))
    return out


@dataclass(frozen=True)
class UnseenCategories:
    """A categorical knob whose training runs never held the categories ``unseen``: the
    model has no term for them and predicts them as another category."""

    knob: str
    unseen: tuple[str, ...]

    def warning(self) -> str:
        shown = ", ".join(self.unseen[:3])
        more = f" and {len(self.unseen) - 3} more" if len(self.unseen) > 3 else ""
        return (f"knob {self.knob}: {shown}{more} never measured; predictions for them are "
                "guesses, and the internal error does not cover them")


@dataclass(frozen=True)
class FarFromRuns:
    """A model whose runs leave ``share`` of the candidate assignments far from every run
    it was fitted on (``training.far_share``); ``flagged`` if its predictions say so (a
    bounded model, which keeps its runs)."""

    share: float
    flagged: bool

    def warning(self) -> str:
        told = ("predictions there are flagged far and their intervals widened"
                if self.flagged else "predictions there are guesses and are not flagged")
        return (f"{self.share:.0%} of the candidate assignments lie far from every run the "
                f"model was fitted on: {told}, and the internal error does not cover them")


def far_from_runs(model: object, at_least: float) -> FarFromRuns | None:
    """A model's (document or loaded) ``training.far_share`` if it is a share of at least
    ``at_least``; ``flagged`` when the model keeps the support that flags far predictions."""
    share = recorded_share(model, "far_share")
    if share is None or share < at_least:
        return None
    support = model.get("support") if isinstance(model, Mapping) else getattr(
        model, "support", None)
    return FarFromRuns(share, bool(support))


@dataclass(frozen=True)
class NonPositive:
    """A model that predicts a T that is not a positive number at ``share`` of the candidate
    assignments (``training.nonpositive_share``): an unbounded form gone wrong there."""

    share: float

    def warning(self) -> str:
        return (f"the model predicts a non-positive or non-finite run time at {self.share:.0%} "
                "of the candidate assignments: its form is wrong there (nimo predict exits 3 "
                "and plan costing refuses such a prediction); a bounded design such as "
                "recommended holds predictions within its runs' range")


def nonpositive_predictions(model: object) -> NonPositive | None:
    """A model's (document or loaded) ``training.nonpositive_share`` if it is a share above
    0; None otherwise."""
    share = recorded_share(model, "nonpositive_share")
    return NonPositive(share) if share else None


def unseen_categories(categories: Mapping[str, Sequence[str]],
                      measured: Mapping[str, Sequence[float]]) -> list[UnseenCategories]:
    """Categorical knobs (``categories[k - 1]`` is level k) with categories whose code is
    not among their ``measured`` values; knobs without measured values are left out."""
    out = []
    for knob, names in categories.items():
        held = {int(round(float(v))) for v in measured.get(knob) or ()}
        unseen = tuple(c for k, c in enumerate(names, 1) if k not in held)
        if held and unseen:
            out.append(UnseenCategories(knob, unseen))
    return out


def extrapolated_knobs(levels: Mapping[str, Sequence[float]],
                       measured: Mapping[str, Sequence[float]]) -> list[Extrapolated]:
    """Knobs with levels outside the range of their ``measured`` values (those of the runs
    the model was fitted on, or just their lowest and highest); knobs without measured
    values are left out."""
    out = []
    for knob, values in levels.items():
        if not measured.get(knob):
            continue
        lo, hi = min(measured[knob]), max(measured[knob])
        beyond = tuple(sorted(float(v) for v in values if not lo <= float(v) <= hi))
        if beyond:
            out.append(Extrapolated(knob, (lo, hi), beyond))
    return out


def measured_values(assignments: Iterable[Mapping[str, float]]) -> dict[str, list[float]]:
    """Each knob's values over ``assignments``."""
    values: dict[str, list[float]] = {}
    for assignment in assignments:
        for k, v in assignment.items():
            values.setdefault(k, []).append(float(v))
    return values


def recorded_share(model: object, key: str) -> float | None:
    """``training[key]`` of a model (document or loaded) if it is a number in [0, 1] (the
    share of the candidates with some property); None otherwise."""
    value = training_record(model).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None
    return float(value)


def training_record(model: object) -> Mapping[str, Any]:
    """A model's free-form training summary (``training`` of its document or of a loaded
    model); {} when it has none or it is not a mapping."""
    training = (model.get("training") if isinstance(model, Mapping)
                else getattr(model, "training", None))
    return training if isinstance(training, Mapping) else {}


def recorded_values(model: object, key: str, knobs: Iterable[str]) -> dict[str, list[float]]:
    """``training[key][knob]`` as finite numbers for each of ``knobs`` that has them: a
    model's record of the values it was fitted on (``measured_range``,
    ``measured_categories``); {} if unreadable."""
    record = training_record(model).get(key)
    if not isinstance(record, Mapping):
        return {}
    values = {knob: finite_numbers(record.get(knob)) for knob in knobs}
    return {knob: v for knob, v in values.items() if v}


def finite_numbers(value: object) -> list[float]:
    """``value`` as a list of finite numbers; [] when it is anything else (records read
    from a model file's free-form training summary)."""
    if isinstance(value, str | bytes):
        return []
    try:
        out = [float(v) for v in value]  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        return []
    return out if all(math.isfinite(v) for v in out) else []
