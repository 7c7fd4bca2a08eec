"""The figures a replay adds to ``final`` (``workbench.replay_scale``), computed from the
finished campaign, its runner and its design."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from nimo.records import RunRequest
from workbench.replay import ReplayRunner
from workbench.replay_scale import ape_summary, target_errors

TARGETS = ("T", "D", "o_a", "o_n", "o_d")


def measured_runs(result: Any, runner: ReplayRunner
                  ) -> tuple[list[dict[str, Any]], np.ndarray]:
    """The distinct assignments the campaign measured and the mean T of their runs (each
    run's replayed measurement, as the planner was told it)."""
    times: dict[tuple[float, ...], list[float]] = {}
    rows: dict[tuple[float, ...], dict[str, Any]] = {}
    for rec in result.iterations:
        if rec.status != "done":
            continue
        outcome = runner.run(RunRequest(rec.run, dict(rec.assignment), rec.purpose))
        if outcome.sample is None:
            continue
        key = tuple(float(rec.assignment[n]) for n in runner.dataset.space.names)
        rows[key] = runner.row(rec.assignment)
        times.setdefault(key, []).append(float(outcome.sample.T))
    keys = list(rows)
    return [rows[k] for k in keys], np.array([np.mean(times[k]) for k in keys])


def external_targets(runner: ReplayRunner) -> list[tuple[dict[str, float], dict[str, float]]]:
    """(assignment, measured targets) of the external set: T as scored, the others the
    mean over the repeats."""
    space = runner.dataset.space
    out = []
    for assignment, T in runner.external:
        samples = runner.dataset.runs[space.from_dict(assignment)]
        measured = {"T": float(T)}
        for t in TARGETS[1:]:
            values = [getattr(s, t) for s in samples]
            if all(v is not None for v in values):
                measured[t] = float(np.mean(values))
        out.append((assignment, measured))
    return out


def scale_final(result: Any, runner: ReplayRunner, design: Mapping[str, Any]
                ) -> dict[str, Any]:
    """``external_median_ape_pct``, ``external_target_error_pct`` and, with a design's
    ``predictors.family``, ``family``; nothing for a replay that uses none of issue 12's
    options (its document stays byte-for-byte what it was)."""
    extra: dict[str, Any] = {}
    model = result.model
    if not protocol_used(runner, design):
        return extra  # a plain replay's document stays as it was
    if model is not None and runner.external:
        X = np.vstack([model.row(a) for a, _ in runner.external])
        extra["external_median_ape_pct"] = ape_summary(
            [T for _, T in runner.external], model.predict_many(X))["external_median_ape_pct"]
        extra["external_target_error_pct"] = target_errors(model, external_targets(runner))
    family = family_final(result, runner, design)
    if family:
        extra["family"] = family
    return extra


def protocol_used(runner: ReplayRunner, design: Mapping[str, Any]) -> bool:
    """Whether the replay uses any of issue 12's options (extrapolation, repeats,
    categorical columns, a design's model family)."""
    from nimo.predictors.options import FAMILY_KEYS

    o = runner.options
    predictors = design.get("predictors") or {}
    return bool(o.extrapolate or o.repeats or runner.categorical
                or any(k in predictors for k in FAMILY_KEYS))


def family_final(result: Any, runner: ReplayRunner, design: Mapping[str, Any]
                 ) -> dict[str, Any]:
    """``final.family`` of a replay: fitted on the distinct measured assignments (mean T),
    scored on the external test set (``nimo.campaign.family``)."""
    from nimo.campaign.family import FamilyData, design_family, family_report

    if design_family(design) is None:
        return {}
    rows, T = measured_runs(result, runner)
    bound = runner.options.extrapolate
    train = FamilyData(rows, T, numeric=runner.numeric_names, categorical=runner.categorical,
                       load=runner.dataset.load, extrapolate_on=bound.column if bound else None,
                       seed=runner.options.seed)
    return family_report(design, train, [runner.row(a) for a, _ in runner.external],
                         [t for _, t in runner.external])
