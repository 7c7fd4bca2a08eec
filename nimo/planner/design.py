"""Design presets: every choice of Table 1 (and this project's additions) as a checked spec.

A design file (``designs/*.yaml``) is a mapping; unknown keys and unknown strategy names raise
ConfigError naming the key and listing what is valid. Each key is declared once, as a field
whose ``option(...)`` metadata holds its checker: parsing, the valid-key hint and ``to_dict``
all follow the fields, so a new option is one line. Strategy names are checked against the
registries of :mod:`nimo.planner.strategies`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any

from nimo.errors import ConfigError
from nimo.planner.strategies.error import ERROR_ESTIMATES
from nimo.planner.strategies.reference import REFERENCES
from nimo.planner.strategies.registry import check_name
from nimo.planner.strategies.sampling import SAMPLINGS
from nimo.planner.strategies.traversal import TRAVERSALS
from nimo.planner.targets import PREDICTOR_NAMES, TARGET_OF

STRATEGIES = ("nimo", "random", "all_samples")  # the keys of nimo.planner.PLANNERS
TARGET_KINDS = ("auto", "occupancy", "direct")
ORDER_NAMES = ("pbdf", "ofat")

Checker = Callable[[str, Any], Any]  # (key path for messages, raw YAML value) -> checked value

__all__ = ["PREDICTOR_NAMES", "TARGET_OF", "DesignSpec", "StopRule", "parse_design"]


def option(check: Checker, default: Any = MISSING, *,
           factory: Callable[[], Any] | None = None, unset_ok: bool = False) -> Any:
    """A design key: its default and its checker (``unset_ok``: a null value keeps the
    default)."""
    meta = {"check": check, "unset_ok": unset_ok}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


# -- checkers -------------------------------------------------------------------------
def text(key: str, value: Any) -> str:
    return str(value)


def one_of(valid: Sequence[str] | Mapping[str, Any]) -> Checker:
    return lambda key, value: check_name(key, value, valid)


def number(lo: float | None = 0.0, hi: float | None = None) -> Checker:
    def check(key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        if lo is not None and value < lo:
            raise ConfigError(f"{key}: must be >= {lo} (got {value})")
        if hi is not None and value > hi:
            raise ConfigError(f"{key}: must be between {lo:g} and {hi:g} (got {value:g})")
        return float(value)
    return check


def integer(lo: float = 1) -> Checker:
    return lambda key, value: int(number(lo)(key, value))


def flag(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key}: expected true or false")
    return value


def mapping(key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected a mapping of predictor options")
    return dict(value)


def order_of_predictors(key: str, value: Any) -> str | tuple[str, ...]:
    if value in ORDER_NAMES:
        return str(value)
    if isinstance(value, list) and value and all(v in PREDICTOR_NAMES for v in value):
        if len(set(value)) != len(value):
            raise ConfigError(f"{key}: {value} repeats a predictor")
        return tuple(value)
    raise ConfigError(f"{key}: expected 'pbdf', 'ofat' or a list of predictors, got {value!r}",
                      hint="predictors: " + ", ".join(PREDICTOR_NAMES))


def order_of_attributes(key: str, value: Any) -> str | dict[str, tuple[str, ...]]:
    if value in ORDER_NAMES:
        return str(value)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected 'pbdf', 'ofat' or a mapping predictor -> "
                          "attribute list")
    out = {}
    for pred, attrs in value.items():
        if pred not in (*PREDICTOR_NAMES, "f_T"):
            raise ConfigError(f"{key}.{pred}: unknown predictor",
                              hint="valid: " + ", ".join((*PREDICTOR_NAMES, "f_T")))
        if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
            raise ConfigError(f"{key}.{pred}: expected a list of names")
        out[pred] = tuple(attrs)
    return out


def _reject_unknown(where: str, given: Mapping[str, Any], valid: Sequence[str]) -> None:
    for key in given:
        if key not in valid:
            raise ConfigError(
                f"{where}{key}: unknown key", hint="valid keys: " + ", ".join(sorted(valid))
            )


def _checked_fields(cls: type, raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Keyword arguments for ``cls`` from ``raw``, each value through its field's checker."""
    _reject_unknown(where, raw, [f.name for f in fields(cls)])
    kw: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in raw or (raw[f.name] is None and f.metadata["unset_ok"]):
            continue
        kw[f.name] = f.metadata["check"](f"{where}{f.name}", raw[f.name])
    return kw


def _plain(value: Any) -> Any:
    """A field value as JSON-ready data (nested specs as mappings, tuples as lists)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return {k: list(x) if isinstance(x, tuple) else x for k, x in value.items()}
    return value


# -- the spec -------------------------------------------------------------------------
@dataclass(frozen=True)
class StopRule:
    """Stop when internal error <= error_pct AND samples >= min_samples (AND, if set, the
    committee of alternative predictors agrees within agreement_pct over the candidates), or
    when the best internal error has not improved by 0.5 points over ``patience`` training
    runs, or when a budget (runs or learning seconds) is spent."""

    error_pct: float = option(number(), 10.0)
    min_samples: int = option(integer(), 5)
    max_runs: int | None = option(integer(), None, unset_ok=True)
    max_learning_s: float | None = option(number(), None, unset_ok=True)
    agreement_pct: float | None = option(number(), None, unset_ok=True)
    patience: int | None = option(integer(), None, unset_ok=True)


def stop_rule(key: str, value: Any) -> StopRule:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected a mapping with keys "
                          + ", ".join(f.name for f in fields(StopRule)))
    return StopRule(**_checked_fields(StopRule, value, f"{key}."))


@dataclass(frozen=True)
class DesignSpec:
    """One complete choice of Algorithm 1's strategies (see designs/README.md)."""

    name: str = option(text, "custom")
    description: str = option(text, "")
    strategy: str = option(one_of(STRATEGIES), "nimo")
    reference: str = option(one_of(REFERENCES), "min")
    predictor_order: str | tuple[str, ...] = option(order_of_predictors, "pbdf")
    traversal: str = option(one_of(TRAVERSALS), "round_robin")
    improvement_threshold_pct: float = option(number(), 2.0)
    attribute_order: str | Mapping[str, tuple[str, ...]] = option(order_of_attributes, "pbdf")
    attribute_threshold_pct: float = option(number(), 2.0)
    sampling: str = option(one_of(SAMPLINGS), "lmax_i1")
    error: str = option(one_of(ERROR_ESTIMATES), "loo")
    test_size: int = option(integer(), 10)
    pbdf_training: bool = option(flag, False)
    stop: StopRule = option(stop_rule, factory=StopRule)
    predictors: Mapping[str, Any] = option(mapping, factory=dict)
    targets: str = option(one_of(TARGET_KINDS), "auto")
    # uncertainty sampling: score / (predicted T ** this)
    cost_exponent: float = option(number(0.0, 2.0), 0.5)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def parse_design(raw: Mapping[str, Any] | None, where: str = "") -> DesignSpec:
    """Check a design mapping (from YAML) and build the spec. ``where`` prefixes messages
    (e.g. the file name)."""
    return DesignSpec(**_checked_fields(DesignSpec, dict(raw or {}), where))
