"""``nimo predict MODEL.json attr=value ...``: predicted T with its interval.

A value that is not a finite number (``nan``, ``inf``), or an attribute given twice, is
refused (one line, exit 2). An interval the model cannot compute (a predictor's variance
unknown, or not finite so far off the grid) is said to be unavailable, in words. A
value outside the range the model was fitted on (the lowest and highest value of each
attribute among its samples, ``training.measured_range``; each attribute's levels for a model
that does not record it) is an extrapolation: predicted, with a warning on stderr; so is a
common level inside that range no sample held (``training.unmeasured_levels``), and any
prediction of a model with attributes its campaign never measured. A prediction that is
not a positive time (an unbounded model's form gone wrong) is printed with an error line on
stderr and exit 3, so that automation never takes it for a run time. A family model
(``nimo model fit|export --family``) gives its point prediction (categories by name) and,
when cross-validation chose it, a 90% interval from its out-of-fold errors.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nimo.errors import ConfigError

if TYPE_CHECKING:
    from nimo.model import CostModel, Prediction


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("predict", help="predict run time from an exported cost model",
                       intermixed=True)  # options anywhere among the attr=value items
    p.add_argument("model", metavar="MODEL.json")
    p.add_argument("values", nargs="*", metavar="attr=value")
    p.add_argument("--level", type=float, default=0.90, help="interval level (default 0.90)")
    p.set_defaults(func=run)


def parse_values(items: Sequence[str], names: Sequence[str],
                 categories: Mapping[str, Sequence[str]] | None = None) -> dict[str, float]:
    """``attr=value`` items as an assignment of every attribute (ConfigError otherwise); a
    categorical attribute (``categories[attr][k - 1]`` is level k) takes a category or its
    code k."""
    categories = categories or {}
    assignment: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"expected attr=value, got {item!r}",
                              hint="attributes: " + ", ".join(names))
        if name not in names:
            raise ConfigError(f"unknown attribute {name!r}", hint="valid: " + ", ".join(names))
        if name in assignment:
            raise ConfigError(f"{name} given twice", hint="give each attribute once")
        assignment[name] = (category_code(name, text, categories[name]) if name in categories
                            else number(name, text))
    missing = [n for n in names if n not in assignment]
    if missing:
        raise ConfigError(f"missing value for {', '.join(missing)}",
                          hint="give every attribute: " + " ".join(f"{n}=..." for n in names))
    return assignment


def number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name}: {text!r} is not a finite number",
                          hint="give a finite value, e.g. " + f"{name}=1")
    return value


def category_code(name: str, text: str, categories: Sequence[str]) -> float:
    """The code k of category ``text`` (``categories[k - 1]``); a code 1..k as such."""
    if text in categories:
        return float(categories.index(text) + 1)
    try:
        code = float(text)
    except ValueError:
        code = math.nan
    if code.is_integer() and 1 <= code <= len(categories):
        return code
    raise ConfigError(f"{name}: unknown category {text!r}",
                      hint="valid: " + ", ".join(categories) + f" (or codes 1..{len(categories)})")


def range_warnings(model: CostModel, assignment: Mapping[str, float],
                   categories: Mapping[str, Sequence[str]]) -> list[str]:
    """One warning per value outside the range its attribute was measured over (or, for a
    model that does not record that range, its levels), and per category of a categorical
    attribute (``categories``) no training run held; never-measured attributes are left to
    :func:`unmeasured_warnings`."""
    from nimo.campaign.metrics import recorded_values, unmeasured_levels

    names = [str(a["name"]) for a in model.attributes]
    gaps = {u.knob: {v for v, _ in u.levels} for u in unmeasured_levels(model)}
    spans = recorded_values(model, "measured_range", [n for n in names if n not in categories])
    held = recorded_values(model, "measured_categories", categories)
    out = []
    for a in model.attributes:
        name = str(a["name"])
        value = assignment.get(name)
        if value is None or name in model.unmeasured:
            continue
        if name in categories:
            codes = {int(round(c)) for c in held.get(name, ())}
            if codes and int(value) not in codes:
                out.append(f"{name}={categories[name][int(value) - 1]} was never measured: "
                           "the prediction is a guess")
            continue
        span = spans.get(name) or [float(v) for v in a.get("levels") or ()]
        what = "measured range" if name in spans else "learned range"
        if not span:
            out.append(f"{name}: the model records no levels, its range cannot be checked")
        elif not min(span) <= value <= max(span):
            out.append(f"{name}={value:g} is outside the {what} {min(span):g} .. "
                       f"{max(span):g}: the prediction is an extrapolation")
        elif value in gaps.get(name, ()):
            out.append(f"{name}={value:g} was never measured (a level between measured "
                       "ones): the prediction interpolates there")
    return out


def predict_family(model: Any, values: Sequence[str]) -> int:
    """A family model (``nimo-family-model``): its prediction, with the interval of its
    out-of-fold errors when it has one. A categorical attribute takes its category or its
    code, as for a cost model."""
    from workbench.replay_categories import named

    categorical = {name: list(levels) for name, levels in model.encoder.categorical.items()}
    row = named(parse_values(values, list(model.names), categorical), categorical)
    T = float(model.predict([row])[0])
    # benchmarks/family_extrapolation.py: beyond the training levels the out-of-fold
    # intervals held 53-85% of the runs, less the farther out
    narrow = (", and its 90% interval is likely too narrow there"
              if model.training.get("interval") else "")
    for name, (lo, hi) in (model.training.get("measured_range") or {}).items():
        if name in row and not lo <= float(row[name]) <= hi:
            print(f"nimo predict: warning: {name}={float(row[name]):g} is outside the measured "
                  f"range {lo:g} .. {hi:g}: the prediction is an extrapolation{narrow}",
                  file=sys.stderr)
    distance = family_distance(model, row)
    print(f"T = {T:.4g} s  ({family_interval_text(model, T, distance)})")
    return 0


def family_distance(model: Any, row: Mapping[str, Any]) -> float | None:
    """The row's distance from the model's training runs when its interval widens with it
    (a warning when it lies beyond every run the interval was checked on)."""
    from nimo.families.interval import checked_widening
    from nimo.families.reach import distance

    doc = model.training.get("interval")
    widening = checked_widening(doc) if isinstance(doc, Mapping) else None
    if widening is None:
        return None
    d = float(distance(model.encoder, doc.get("reach"), [row])[0])
    if d > widening["checked_to"]:
        print(f"nimo predict: warning: this assignment lies farther from the training runs "
              f"({d:.3g}) than any run the interval was checked on ({widening['checked_to']:.3g}):"
              " the prediction and its interval are extrapolations", file=sys.stderr)
    return d


def family_interval_text(model: Any, T: float, distance: float | None = None) -> str:
    """A family model's interval from its out-of-fold errors, or why it has none."""
    from nimo.families.interval import interval_of

    doc = model.training.get("interval")
    bounds = interval_of(doc, T, distance)
    if bounds is None:
        why = ("it was fitted without cross-validation (nimo model fit --no-cv, or a model "
               "written before named families were cross-validated)"
               if "chosen_by" not in model.training
               else "too few out-of-fold errors for one")
        return f"family {model.family}: a point prediction, no interval: {why}"
    how = " and this assignment's distance from the runs" if distance is not None else ""
    return (f"family {model.family}; {doc['level']:.0%} interval {bounds[0]:.4g} .. "
            f"{bounds[1]:.4g} s from {doc['residuals']} out-of-fold errors{how}")


def unmeasured_warnings(names: Sequence[str]) -> list[str]:
    """One warning per attribute the campaign never measured (every run varying it failed)."""
    return [f"{name}: never measured (every run that varied it failed): the prediction "
            f"ignores its effect" for name in names]


def interval_text(model: CostModel, p: Prediction, level: float) -> str:
    """The output line's interval and its calibration, or in words why there is none."""
    from nimo.model.calibration import CALIBRATION_SOURCES
    from nimo.model.equation import KINDS

    if not (math.isfinite(p.lo) and math.isfinite(p.hi)):
        no_dof = any(model.predictors[t].dof <= 0 for t in KINDS[model.kind])
        unknown = any(math.isnan(model.predictors[t].resid_var) for t in KINDS[model.kind])
        why = ("a predictor's variance is unknown (fitted with no residual degrees of freedom)"
               if no_dof else "a predictor's residual variance is unknown" if unknown
               else "the model's variance is not a finite number at this assignment")
        return f"{level:.0%} interval unavailable: {why}"
    cal = model.calibration
    source = CALIBRATION_SOURCES.get(cal.get("method", ""), cal.get("method", "?"))
    how = f"; calibrated on {len(cal['z'])} {source} residuals" if cal.get("z") else ""
    return f"{level:.0%} interval {p.lo:.4g} .. {p.hi:.4g} s{how}"


def run(args: argparse.Namespace) -> int:
    from nimo.model import CostModel
    from nimo.model.family import load_any
    from workbench.exitstatus import Exit

    model = load_any(args.model)
    if not isinstance(model, CostModel):
        return predict_family(model, args.values)
    categories = {str(a["name"]): list(a["categories"]) for a in model.attributes
                  if a.get("categories")}
    assignment = parse_values(args.values, list(model.names), categories)
    if not 0.0 < args.level < 1.0:
        raise ConfigError(f"--level must lie in (0, 1) (got {args.level})")
    for warning in [*range_warnings(model, assignment, categories),
                    *unmeasured_warnings(model.unmeasured)]:
        print(f"nimo predict: warning: {warning}", file=sys.stderr)
    p = model.predict_interval(assignment, level=args.level)
    if p.far:
        print("nimo predict: warning: far from every measured assignment: the interval is "
              "widened and the prediction is a guess", file=sys.stderr)
    if p.held and model.monotone is not None:
        print("nimo predict: warning: the fitted form breaks the order of the measured runs "
              "here (more capacity predicted slower, or less faster, than a run took): the "
              f"prediction is held within {model.monotone.kappa:g}x of those runs and is "
              "uncertain", file=sys.stderr)
    print(f"T = {p.mean:.4g} s  ({interval_text(model, p, args.level)})")
    if not p.is_time:  # an unbounded form gone wrong here
        print("nimo predict: error: the model predicts no positive run time here: its form is "
              "wrong at this assignment (a bounded design such as recommended holds "
              "predictions within its runs' range)", file=sys.stderr)
        return int(Exit.FAILED)
    return 0
