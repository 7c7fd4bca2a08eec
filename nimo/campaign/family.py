"""A design's model family (issue 12, item 3) fitted when a campaign ends.

With ``predictors: {family: NAME|auto}`` in the design, the family is fitted on the
campaign's training runs (``auto``: chosen among the candidates by an honest cross-validation
on those runs only, ``nimo.families.choose_family``) and scored on runs it never saw: a
replay's external test set (``workbench.replay_family``), a live campaign's holdout runs
(``lifecycle``). Both report it with :func:`family_report` (``final.family``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimo import metrics
from nimo.errors import NimoError, one_line
from nimo.records import RunOutcome
from nimo.space import ResourceSpace

Row = Mapping[str, Any]  # {attribute: number, or category name}
FIT_ERRORS = (NimoError, ValueError, np.linalg.LinAlgError)


@dataclass(frozen=True)
class FamilyData:
    """Training runs as family rows, their run times and the attributes' roles."""

    rows: Sequence[Row]
    T: np.ndarray
    numeric: Sequence[str]
    categorical: Sequence[str] = ()
    load: Sequence[str] = ()
    extrapolate_on: str | None = None
    seed: int = 0


def design_family(design: Mapping[str, Any]) -> Any:
    """The design's ``FamilyOptions`` (``predictors.family``), or None without one."""
    from nimo.predictors import PredictorOptions

    return PredictorOptions.from_dict(design.get("predictors")).family


def space_data(space: ResourceSpace, cases: Sequence[tuple[Mapping[str, float], float]],
               seed: int = 0) -> FamilyData:
    """(assignment, T) cases of ``space`` as family rows: a categorical attribute's level as
    its category name, load attributes marked."""
    cats = space.categories
    return FamilyData(
        rows=[space.named(a) for a, _ in cases], T=np.array([t for _, t in cases], float),
        numeric=tuple(n for n in space.names if n not in cats), categorical=tuple(cats),
        load=tuple(a.name for a in space.attributes if a.load and not a.categories),
        seed=seed)


def measured_cases(outcomes: Sequence[RunOutcome]) -> list[tuple[dict[str, float], float]]:
    """(assignment, T) of every successful run among ``outcomes``."""
    return [(dict(o.request.assignment), float(o.sample.T)) for o in outcomes
            if o.ok and o.sample is not None]


def family_report(design: Mapping[str, Any], train: FamilyData, test_rows: Sequence[Row],
                  test_T: Sequence[float], scored_on: str = "external") -> dict[str, Any]:
    """``final.family``: the family's name, how it was chosen, each candidate's honest error
    (%), the training runs, its ``<scored_on>_mape_pct``, ``_median_ape_pct`` and
    ``_coverage_90`` (the share inside its 90% interval, never calibrated on them) on the test
    runs and the model (``FamilyModel.to_dict``); empty without a family in the design, an
    ``error`` when no candidate can be fitted."""
    from nimo.families import choose_family

    options = design_family(design)
    if options is None:
        return {}
    if len(train.rows) == 0:
        return {"error": "no measured run to fit a family on"}
    auto = options.family == "auto"
    try:
        choice = choose_family(
            options.candidates if auto else (options.family,), train.rows, train.T,
            numeric=train.numeric, categorical=train.categorical, load=train.load,
            extrapolate_on=train.extrapolate_on, seed=train.seed)
    except FIT_ERRORS as e:
        return {"name": options.family, "error": one_line(e), "training_runs": len(train.rows)}
    scored: dict[str, Any] = ape_summary((), (), scored_on)
    try:  # a test run may have a category no training run had
        predicted = choice.model.predict(test_rows) if test_rows else np.empty(0)
        scored = {**ape_summary(test_T, predicted, scored_on),
                  f"{scored_on}_coverage_90": coverage(choice.model, test_rows, test_T,
                                                       predicted)}
    except FIT_ERRORS as e:
        scored[f"{scored_on}_error"] = one_line(e)
    return {"name": choice.family, "chosen_by": choice.method if auto else "design",
            "honest_error_pct": choice.errors, "training_runs": len(train.rows),
            **scored, "model": choice.model.to_dict()}


def coverage(model: Any, rows: Sequence[Row], actual: Sequence[float],
             predicted: np.ndarray) -> float | None:
    """The share of ``actual`` inside the model's 90% interval (widened for each row's
    distance from the training runs when it widens), None without an interval or runs."""
    from nimo.families.interval import family_bounds

    bounds = family_bounds(model, rows, predicted)
    if not len(actual) or all(b is None for b in bounds):
        return None
    return float(np.mean([b is not None and b[0] <= float(t) <= b[1]
                          for b, t in zip(bounds, actual, strict=True)]))


def ape_summary(actual: Sequence[float], predicted: Sequence[float] | np.ndarray,
                scored_on: str = "external") -> dict[str, float | None]:
    """``<scored_on>_mape_pct`` and ``<scored_on>_median_ape_pct`` (None when empty)."""
    y = np.asarray(actual, dtype=float)
    p = np.asarray(predicted, dtype=float)
    return {f"{scored_on}_mape_pct": metrics.mape_pct(y, p),
            f"{scored_on}_median_ape_pct": metrics.median_ape_pct(y, p)}
