"""Checks of a cost model's JSON fields as it loads (numpy only): a ModelError of one line
names the field and what would be valid (docs/model-format.md, "Errors")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nimo.errors import ModelError
from nimo.finite import finite_or_none
from nimo.model.gp import process_from
from nimo.model.monotone import monotone_from
from nimo.model.predictor import FittedPredictor
from nimo.model.residual import residual_from
from nimo.model.support import part_bounds_from


def field_of(d: Mapping[str, Any], key: str, where: str = "cost model") -> Any:
    """``d[key]``; ModelError when ``where`` lacks it."""
    if key not in d:
        raise ModelError(f"corrupt cost model: {where} lacks field {key!r}")
    return d[key]


def kind_from(d: Mapping[str, Any], kinds: Sequence[str]) -> str:
    """The ``kind`` field, one of ``kinds`` (checked before any field that depends on it)."""
    kind = field_of(d, "kind")
    if not isinstance(kind, str) or kind not in kinds:
        raise ModelError(f"corrupt cost model: bad field 'kind' ({kind!r}; must be one of: "
                         f"{', '.join(kinds)})")
    return kind


def assigned_value(name: str, value: Any) -> float:
    """An assignment's value of attribute ``name`` as a finite float (ModelError naming it)."""
    try:
        v = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v):
        raise ModelError(f"assignment: {name} = {value!r} is not a finite number")
    return v


def attributes_from(attrs: Any) -> list[dict[str, Any]]:
    """The ``attributes`` field: objects with a ``name`` and ``levels``, a non-empty list of
    finite numbers (the support, the residual and the process scale by them)."""
    if not isinstance(attrs, list) or not all(isinstance(a, Mapping) and "name" in a
                                              for a in attrs):
        raise ModelError("corrupt cost model: field 'attributes' must list {name, ...}")
    for i, a in enumerate(attrs):
        levels = a.get("levels")
        if not isinstance(levels, list) or not levels or not all(
                _finite_number(v) for v in levels):
            raise ModelError(f"corrupt cost model: bad field 'attributes[{i}].levels' "
                             f"({str(levels)[:60]}; must list at least one finite number)")
    return [dict(a) for a in attrs]


def _finite_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and (
        finite_or_none(v) is not None)


def training_from(t: Any) -> dict[str, Any]:
    """The ``training`` summary ({} when absent): an object."""
    return _object_field(t, "training")


def calibration_from(c: Any) -> dict[str, Any]:
    """The ``calibration`` field ({} when absent); its ``z`` is checked by the model."""
    return _object_field(c, "calibration")


def _object_field(value: Any, key: str) -> dict[str, Any]:
    """An optional object field ({} when absent or null); ModelError naming ``key`` else."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ModelError(f"corrupt cost model: field {key!r} must be an object")
    return dict(value)


def predictors_from(preds: Mapping[str, Any], names: Sequence[str]
                    ) -> dict[str, FittedPredictor]:
    """Each predictor read back, its ``params`` all finite: the writer never stores a
    non-finite one (JSON without NaN), and one would make every prediction NaN. A ``cov``
    entry may be unknown (null, NaN) but never infinite."""
    out = {str(t): FittedPredictor.from_dict(p, names) for t, p in preds.items()}
    for target, p in out.items():
        _check(target, "params", p.params, ~np.isfinite(p.params), "non-finite parameter",
               "each must be a finite number")
        _check(target, "cov", p.cov, np.isinf(p.cov), "infinite entry",
               "each must be a finite number or null")
    return out


def _check(target: str, key: str, values: np.ndarray, bad: np.ndarray, what: str,
           valid: str) -> None:
    """ModelError naming predictor ``target``'s field ``key`` and its first ``bad`` entry."""
    if not bad.any():
        return
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    index = "".join(f"[{i}]" for i in at)
    raise ModelError(f"corrupt cost model: bad field 'predictors.{target}.{key}' ({what} "
                     f"{key}{index} = {float(values[at])}; {valid})")


def optional_fields(d: Mapping[str, Any], targets: Sequence[str],
                    attrs: Sequence[Mapping[str, Any]], support: list[list[float]] | None
                    ) -> dict[str, Any]:
    """The optional fields over the support, as ``CostModel`` keywords: ``residual``,
    ``gp`` with ``gp_weight``, ``part_bounds`` and ``monotone``."""
    levels = [a.get("levels", ()) for a in attrs]
    out: dict[str, Any] = {}
    try:
        out["residual"] = residual_from(d.get("residual"), levels, support)
    except (KeyError, TypeError, ValueError, np.linalg.LinAlgError) as e:
        raise ModelError(f"corrupt cost model: bad field 'residual' ({e})") from None
    try:
        out["gp"], out["gp_weight"] = process_from(d.get("gp"), levels, support)
        if out["gp"] is not None and "bounds" not in d:
            raise ValueError("'gp' needs 'bounds'")
    except (KeyError, TypeError, ValueError, np.linalg.LinAlgError) as e:
        raise ModelError(f"corrupt cost model: bad field 'gp' ({e})") from None
    try:
        out["part_bounds"] = part_bounds_from(d.get("part_bounds"), targets)
    except (TypeError, ValueError) as e:
        raise ModelError(f"corrupt cost model: bad field 'part_bounds' ({e})") from None
    try:
        out["monotone"] = monotone_from(d.get("monotone"), support, attrs)
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"corrupt cost model: bad field 'monotone' ({e})") from None
    return out
