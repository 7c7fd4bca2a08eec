"""The cost model's format versions: the oldest version that holds every field a model
has, so a model without the newer fields loads in an older NIMO."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nimo.model.predictor import RELATIVE

if TYPE_CHECKING:
    from nimo.model.cost import CostModel

# 2: a residual correction; 3: a GP blend; 4: each predictor held in bounds (part_bounds);
# 5: a predictor's noise relative to its prediction (FittedPredictor.variance); 6: T held
# near the runs an assignment has more or less of (nimo.model.monotone); 7: averaged with
# alternative fits (nimo.model.average); 8: a jump term (the step_below transform)
VERSION_PLAIN, VERSION_RESIDUAL, VERSION_GP, VERSION_PARTS, VERSION_RELATIVE = 1, 2, 3, 4, 5
VERSION_MONOTONE, VERSION_AVERAGE, VERSION = 6, 7, 8


def format_version(model: CostModel) -> int:
    """The oldest format version that holds every field ``model`` has (see VERSION)."""
    if any(f.transform == "step_below" for p in model.predictors.values()
           for t in p.terms for f in t.factors):
        return VERSION
    if model.average is not None or model.monotone is not None:
        return VERSION_AVERAGE if model.average is not None else VERSION_MONOTONE
    if any(p.variance == RELATIVE for p in model.predictors.values()):
        return VERSION_RELATIVE
    return VERSION_PARTS if model.part_bounds else VERSION_GP if model.gp is not None else (
        VERSION_RESIDUAL if model.residual is not None else VERSION_PLAIN)
