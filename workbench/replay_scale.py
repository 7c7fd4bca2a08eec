"""Replay's extrapolation protocol, repeat aggregation and the figures it adds to ``final``.

``--extrapolate 'COL<=VALUE'`` (also ``<``, ``>=``, ``>``): the planner sees only the
assignments inside the bound and the external test set is every assignment outside it.
``--repeats min|median|mean``: a run of an assignment replays its fastest (``min``) or its
median recorded measurement (the lower one of an even count), ``mean`` keeps the seeded
random pick; the external set's measured T is that aggregate of the repeats. Without the
flag nothing changes (random pick, mean T).

With any of these options (or ``--categorical``, or a design's ``predictors.family``),
``final`` gains ``external_median_ape_pct`` beside the mean, per-target errors of the
planner's model, and with a design's ``predictors.family`` the chosen family's model fitted on
the runs the campaign measured (``final.family``): its honest estimates, external errors and
its exported form.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimo import metrics
from nimo.errors import ConfigError
from nimo.finite import finite_or_none

REPEATS = ("min", "median", "mean")
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_BOUND = re.compile(r"^\s*([^<>=\s]+)\s*(<=|>=|<|>)\s*([^<>=\s]+)\s*$")


@dataclass(frozen=True)
class Bound:
    """``column op value``: the configurations a model is trained on."""

    column: str
    op: str
    value: float

    def inside(self, x: float) -> bool:
        return _OPS[self.op](x, self.value)

    def __str__(self) -> str:
        return f"{self.column}{self.op}{self.value:g}"


def parse_bound(text: str | Bound | None) -> Bound | None:
    """``'nodes<=20'`` as a Bound (argparse and stored-spec parser)."""
    if text is None or isinstance(text, Bound):
        return text
    m = _BOUND.match(str(text))
    value = None
    if m:
        try:
            value = float(m.group(3))
        except ValueError:
            value = None
    if not m or value is None or not math.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"expected COL<=VALUE (or <, >=, >) with a number, got {text!r}")
    return Bound(m.group(1), m.group(2), value)


def parse_repeats(text: str | None) -> str | None:
    if text is None or text in REPEATS:
        return text
    raise argparse.ArgumentTypeError(f"expected one of {', '.join(REPEATS)}, got {text!r}")


def split_by_bound(assignments: Sequence[Any], names: Sequence[str], bound: Bound,
                   path: str) -> tuple[list[Any], list[Any]]:
    """(inside, outside) of the bound; ConfigError when the column is not an attribute or
    either side is empty."""
    if bound.column not in names:
        raise ConfigError(f"--extrapolate: {bound.column!r} is not an attribute of {path}",
                          hint="attributes: " + ", ".join(names))
    j = list(names).index(bound.column)
    inside = [a for a in assignments if bound.inside(a[j])]
    outside = [a for a in assignments if not bound.inside(a[j])]
    if not inside or not outside:
        side = "inside" if not inside else "outside"
        raise ConfigError(f"--extrapolate {bound}: no assignment of {path} lies {side} the "
                          "bound")
    return inside, outside


PICKED_REPEATS = ("min", "median")


def pick_index(times: Sequence[float], repeats: str | None) -> int | None:
    """The repeat a run replays: the fastest or the (lower) median; None = random pick."""
    return picked_repeat(times, repeats) if repeats in PICKED_REPEATS else None


def picked_repeat(times: Sequence[float], repeats: str) -> int:
    """The index of the fastest (``min``) or the lower median (``median``) repeat."""
    order = np.argsort(np.asarray(times, dtype=float), kind="stable")
    return int(order[0] if repeats == "min" else order[(len(order) - 1) // 2])


def aggregate(times: Sequence[float], repeats: str | None) -> float:
    """The measured T of an assignment: min, median or (default) mean of its repeats."""
    t = np.asarray(times, dtype=float)
    if repeats == "min":
        return float(t.min())
    if repeats == "median":
        return float(np.median(t))
    return float(t.mean())


def ape_summary(actual: Sequence[float], predicted: Sequence[float] | np.ndarray
                ) -> dict[str, float | None]:
    y, p = np.asarray(actual, float), np.asarray(predicted, float)
    return {"external_mape_pct": metrics.mape_pct(y, p),
            "external_median_ape_pct": metrics.median_ape_pct(y, p)}


def target_errors(model: Any, cases: Sequence[tuple[Mapping[str, float], Mapping[str, float]]]
                  ) -> dict[str, float | None]:
    """Per-target error (%) of the planner's model on measured targets: MAPE for T and D,
    denominators floored at 5% of the mean for the occupancies (``internal_error_pct``)."""
    if model is None or not cases or not hasattr(model, "predict_targets"):
        return {}
    X = np.vstack([model.row(a) for a, _ in cases])
    predicted = model.predict_targets(X)
    predicted["T"] = model.predict_many(X)
    out: dict[str, float | None] = {}
    for target, p in predicted.items():
        y = np.array([m.get(target, math.nan) for _, m in cases], dtype=float)
        if not np.all(np.isfinite(y)):
            continue
        value = (metrics.mape_pct(y, p) if target in ("T", "D")
                 else metrics.internal_error_pct(y, p))
        out[target] = finite_or_none(value)
    return out


def with_final(result: Any, extra: Mapping[str, Any]) -> Any:
    """``result`` (a CampaignResult) with ``extra`` added to its ``final``."""
    return dataclasses.replace(result, final_extra={**result.final_extra, **extra})
