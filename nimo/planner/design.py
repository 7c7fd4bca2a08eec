"""Design presets: every choice of Table 1 (and this project's additions) as a checked spec.

A design file (``designs/*.yaml``) is a mapping; unknown keys and unknown strategy names raise
ConfigError naming the key and listing what is valid. Each key is declared once, as a
:mod:`nimo.config` option (the toolkit inventories use too): parsing, the valid-key hint and
``to_dict`` all follow the fields, so a new option is one line. Strategy names are checked
against the registries of :mod:`nimo.planner.strategies`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nimo.config import (
    Boolean,
    Checker,
    Integer,
    Kind,
    Nested,
    Number,
    option,
    section,
    to_dict,
    valid_hint,
)
from nimo.errors import ConfigError
from nimo.planner.strategies.error import CV_ERRORS, ERROR_ESTIMATES
from nimo.planner.strategies.reference import REFERENCES
from nimo.planner.strategies.samplings import SAMPLINGS
from nimo.planner.strategies.traversal import TRAVERSALS
from nimo.planner.targets import PREDICTOR_NAMES, TARGET_OF
from nimo.predictors.options import PredictorOptions

STRATEGIES = ("nimo", "random", "all_samples")  # the keys of nimo.planner.PLANNERS
TARGET_KINDS = ("auto", "occupancy", "direct")
ORDER_NAMES = ("pbdf", "ofat")
MAX_BATCH = 256  # training runs asked at once at most

__all__ = ["PREDICTOR_NAMES", "TARGET_OF", "DesignSpec", "StopRule", "parse_design"]


# -- kinds of design values (nimo.config's kinds cover the rest) ----------------------------
@dataclass(frozen=True)
class Label(Kind):
    """Any scalar, kept as text (a design's name or description)."""

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        return str(value)


@dataclass(frozen=True)
class Named(Kind):
    """A strategy name registered in ``valid`` (a registry or a tuple of names)."""

    valid: Sequence[str] | Mapping[str, Any]

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        names = list(self.valid)
        if not isinstance(value, str) or value not in names:
            raise ck.fail(key, f"unknown value {value!r}", valid_hint(names))
        return value


@dataclass(frozen=True)
class FreeMapping(Kind):
    """A mapping passed on as it is (the predictors' own options, checked by them)."""

    def parse(self, ck: Checker, key: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise ck.fail(key, "expected a mapping of predictor options")
        return dict(value)


@dataclass(frozen=True)
class PredictorOrder(Kind):
    """'pbdf', 'ofat' or a list of predictors (no repeats)."""

    def parse(self, ck: Checker, key: str, value: Any) -> str | tuple[str, ...]:
        if value in ORDER_NAMES:
            return str(value)
        if isinstance(value, list) and value and all(v in PREDICTOR_NAMES for v in value):
            if len(set(value)) != len(value):
                raise ck.fail(key, f"{value} repeats a predictor")
            return tuple(value)
        raise ck.fail(key, f"expected 'pbdf', 'ofat' or a list of predictors, got {value!r}",
                      "predictors: " + ", ".join(PREDICTOR_NAMES))


@dataclass(frozen=True)
class AttributeOrder(Kind):
    """'pbdf', 'ofat' or a mapping predictor -> attribute list."""

    def parse(self, ck: Checker, key: str, value: Any) -> str | dict[str, tuple[str, ...]]:
        if value in ORDER_NAMES:
            return str(value)
        if not isinstance(value, Mapping):
            raise ck.fail(key, "expected 'pbdf', 'ofat' or a mapping predictor -> "
                          "attribute list")
        out = {}
        for pred, attrs in value.items():
            if pred not in (*PREDICTOR_NAMES, "f_T"):
                raise ck.fail(f"{key}.{pred}", "unknown predictor",
                              valid_hint((*PREDICTOR_NAMES, "f_T")))
            if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
                raise ck.fail(f"{key}.{pred}", "expected a list of names")
            out[pred] = tuple(attrs)
        return out


@dataclass(frozen=True)
class Names(Kind):
    """A list of attribute names (checked against the space when the planner starts)."""

    def parse(self, ck: Checker, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ck.fail(key, f"expected a list of attribute names, got {value!r}")
        return tuple(value)


# -- the spec -------------------------------------------------------------------------
# stop keys added after designs were first recorded: echoed only when set
_UNSET_LATER_KEYS = ("honest", "confirm_runs", "confirm_pct")

@section
class StopRule:
    """Stop when internal error <= error_pct AND samples >= min_samples (AND, if set, the
    committee of alternative predictors agrees within agreement_pct over the candidates), or
    when the best internal error has not improved by 0.5 points over ``patience`` training
    runs, or when a budget (runs or learning seconds) is spent."""

    error_pct: float = option(Number(lo=0), default=10.0)
    min_samples: int = option(Integer(lo=1), default=5)
    max_runs: int | None = option(Integer(lo=1), default=None)
    max_learning_s: float | None = option(Number(lo=0), default=None)
    agreement_pct: float | None = option(Number(lo=0), default=None)
    patience: int | None = option(Integer(lo=1), default=None)
    # every stop reason names the delivered model's own error and whether it missed error_pct
    honest: bool = option(Boolean(), default=False)
    # error_pct counts only once the last confirm_runs training runs, each predicted by the
    # model of its time before it ran, were within confirm_pct (default error_pct) on average
    confirm_runs: int | None = option(Integer(lo=1), default=None)
    confirm_pct: float | None = option(Number(lo=0), default=None)


@section
class DesignSpec:
    """One complete choice of Algorithm 1's strategies (see designs/README.md)."""

    name: str = option(Label(), default="custom")
    description: str = option(Label(), default="")
    strategy: str = option(Named(STRATEGIES), default="nimo")
    reference: str = option(Named(REFERENCES), default="min")
    predictor_order: str | tuple[str, ...] = option(PredictorOrder(), default="pbdf")
    traversal: str = option(Named(TRAVERSALS), default="round_robin")
    improvement_threshold_pct: float = option(Number(lo=0), default=2.0)
    attribute_order: str | Mapping[str, tuple[str, ...]] = option(AttributeOrder(),
                                                                  default="pbdf")
    attribute_threshold_pct: float = option(Number(lo=0), default=2.0)
    sampling: str = option(Named(SAMPLINGS), default="lmax_i1")
    error: str = option(Named(ERROR_ESTIMATES), default="loo")
    test_size: int = option(Integer(lo=1), default=10)
    pbdf_training: bool = option(Boolean(), default=False)
    stop: StopRule = option(Nested(StopRule), default_factory=StopRule)
    predictors: Mapping[str, Any] = option(FreeMapping(), default_factory=dict)
    targets: str = option(Named(TARGET_KINDS), default="auto")
    # uncertainty sampling: score / (predicted T ** this)
    cost_exponent: float = option(Number(lo=0.0, hi=2.0), default=0.5)
    # load attributes (input size, iterations, job parameters): more = more work
    load: tuple[str, ...] = option(Names(), default=())
    # training runs asked at once in free sampling (unset: the runner's concurrency, fixed
    # when the campaign is created; see nimo.campaign.lifecycle.with_batch)
    batch: int | None = option(Integer(lo=1, hi=MAX_BATCH), default=None)

    @property
    def batch_size(self) -> int:
        """The training runs one ask may issue (``batch``, 1 when unset)."""
        return self.batch or 1

    def to_dict(self) -> dict[str, Any]:
        """Every key; the later additions ``load``, ``batch``, ``stop.honest`` and
        ``stop.confirm_*`` only when set (the recorded form of the designs that do not use
        them stays as it was)."""
        d = dict(to_dict(self))
        if d.get("batch") is None:
            d.pop("batch", None)
        if not d.get("load"):
            d.pop("load", None)
        else:
            d["load"] = list(d["load"])
        stop = d.get("stop")
        if isinstance(stop, dict):
            d["stop"] = {k: v for k, v in stop.items() if k not in _UNSET_LATER_KEYS
                         or v not in (None, False)}
        return d


def parse_design(raw: Mapping[str, Any] | None, where: str = "") -> DesignSpec:
    """Check a design mapping (from YAML) and build the spec. ``where`` prefixes messages
    (e.g. the file name)."""
    source = where.rstrip().removesuffix(":")
    checker = Checker(source)
    spec = checker.section(DesignSpec, dict(raw or {}))
    try:  # the predictors' own options, checked here so that an error names the file
        PredictorOptions.from_dict(spec.predictors)
    except ConfigError as e:
        raise checker.fail("", e.message, e.hint) from None
    for key in ("residual", "gp"):
        if spec.predictors.get(key) is True and spec.error not in CV_ERRORS:
            # the correction (the blend) is chosen inside the cross-validation: with another
            # error estimate it would silently never be used
            raise checker.fail(f"predictors.{key}", "needs a cross-validated error, one of "
                               f"{', '.join(CV_ERRORS)} (the design has error: {spec.error})",
                               hint=f"set error: cv_form, or drop predictors.{key}")
    return spec
