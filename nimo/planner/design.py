"""Design presets: every choice of Table 1 (and this project's additions) as a checked spec.

A design file (``designs/*.yaml``) is a mapping; unknown keys and unknown strategy names raise
ConfigError naming the key and listing what is valid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from nimo.errors import ConfigError

STRATEGIES = ("nimo", "random", "all_samples")
REFERENCES = ("min", "max", "rand")
TRAVERSALS = ("round_robin", "improvement", "dynamic")
SAMPLINGS = ("lmax_i1", "l2_i2", "lmax_i1+uncertainty")
ERRORS = ("loo", "test_random", "test_pbdf")
PREDICTOR_NAMES = ("f_a", "f_n", "f_d", "f_D")
TARGET_OF = {"f_a": "o_a", "f_n": "o_n", "f_d": "o_d", "f_D": "D", "f_T": "T"}


def _choice(key: str, value: Any, valid: Sequence[str]) -> str:
    if value not in valid:
        raise ConfigError(f"{key}: unknown value {value!r}", hint="valid: " + ", ".join(valid))
    return value


def _number(key: str, value: Any, lo: float | None = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{key}: expected a number, got {value!r}")
    if lo is not None and value < lo:
        raise ConfigError(f"{key}: must be >= {lo} (got {value})")
    return float(value)


def _reject_unknown(where: str, given: Mapping[str, Any], valid: Sequence[str]) -> None:
    for key in given:
        if key not in valid:
            raise ConfigError(
                f"{where}{key}: unknown key", hint="valid keys: " + ", ".join(sorted(valid))
            )


@dataclass(frozen=True)
class StopRule:
    """Stop when internal error <= error_pct AND samples >= min_samples (AND, if set, the
    committee of alternative predictors agrees within agreement_pct over the candidates), or
    when the best internal error has not improved by 0.5 points over ``patience`` training
    runs, or when a budget (runs or learning seconds) is spent."""

    error_pct: float = 10.0
    min_samples: int = 5
    max_runs: int | None = None
    max_learning_s: float | None = None
    agreement_pct: float | None = None
    patience: int | None = None


@dataclass(frozen=True)
class DesignSpec:
    """One complete choice of Algorithm 1's strategies (see designs/README.md)."""

    name: str = "custom"
    description: str = ""
    strategy: str = "nimo"
    reference: str = "min"
    predictor_order: str | tuple[str, ...] = "pbdf"
    traversal: str = "round_robin"
    improvement_threshold_pct: float = 2.0
    attribute_order: str | Mapping[str, tuple[str, ...]] = "pbdf"
    attribute_threshold_pct: float = 2.0
    sampling: str = "lmax_i1"
    error: str = "loo"
    test_size: int = 10
    pbdf_training: bool = False
    stop: StopRule = field(default_factory=StopRule)
    predictors: Mapping[str, Any] = field(default_factory=dict)
    targets: str = "auto"
    cost_exponent: float = 0.5  # uncertainty sampling: score / (predicted T ** this)

    @property
    def needs_ofat(self) -> bool:
        return self.predictor_order == "ofat" or self.attribute_order == "ofat"

    @property
    def needs_pbdf(self) -> bool:
        return (
            self.predictor_order == "pbdf"
            or self.attribute_order == "pbdf"
            or self.error == "test_pbdf"
            or self.sampling == "l2_i2"
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, StopRule):
                v = {k.name: getattr(v, k.name) for k in fields(v)}
            elif isinstance(v, tuple):
                v = list(v)
            elif isinstance(v, Mapping):
                v = {k: list(x) if isinstance(x, tuple) else x for k, x in v.items()}
            out[f.name] = v
        return out


_TOP_KEYS = (
    "name", "description", "strategy", "reference", "predictor_order", "traversal",
    "improvement_threshold_pct", "attribute_order", "attribute_threshold_pct", "sampling",
    "error", "test_size", "pbdf_training", "stop", "predictors", "targets", "cost_exponent",
)
_STOP_KEYS = ("error_pct", "min_samples", "max_runs", "max_learning_s", "agreement_pct",
              "patience")


def parse_design(raw: Mapping[str, Any] | None, where: str = "") -> DesignSpec:
    """Check a design mapping (from YAML) and build the spec. ``where`` prefixes messages
    (e.g. the file name)."""
    raw = dict(raw or {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}design must be a mapping of keys to values")
    _reject_unknown(where, raw, _TOP_KEYS)
    kw: dict[str, Any] = {}
    for key in ("name", "description"):
        if key in raw:
            kw[key] = str(raw[key])
    if "strategy" in raw:
        kw["strategy"] = _choice(f"{where}strategy", raw["strategy"], STRATEGIES)
    if "reference" in raw:
        kw["reference"] = _choice(f"{where}reference", raw["reference"], REFERENCES)
    if "traversal" in raw:
        kw["traversal"] = _choice(f"{where}traversal", raw["traversal"], TRAVERSALS)
    if "sampling" in raw:
        kw["sampling"] = _choice(f"{where}sampling", raw["sampling"], SAMPLINGS)
    if "error" in raw:
        kw["error"] = _choice(f"{where}error", raw["error"], ERRORS)
    if "targets" in raw:
        kw["targets"] = _choice(f"{where}targets", raw["targets"], ("auto", "occupancy", "direct"))
    if "cost_exponent" in raw:
        kw["cost_exponent"] = _number(f"{where}cost_exponent", raw["cost_exponent"])
        if kw["cost_exponent"] > 2:
            raise ConfigError(f"{where}cost_exponent: must be between 0 and 2 "
                              f"(got {kw['cost_exponent']:g})")
    for key in ("improvement_threshold_pct", "attribute_threshold_pct"):
        if key in raw:
            kw[key] = _number(f"{where}{key}", raw[key])
    if "test_size" in raw:
        kw["test_size"] = int(_number(f"{where}test_size", raw["test_size"], 1))
    if "pbdf_training" in raw:
        if not isinstance(raw["pbdf_training"], bool):
            raise ConfigError(f"{where}pbdf_training: expected true or false")
        kw["pbdf_training"] = raw["pbdf_training"]
    if "predictor_order" in raw:
        kw["predictor_order"] = _predictor_order(where, raw["predictor_order"])
    if "attribute_order" in raw:
        kw["attribute_order"] = _attribute_order(where, raw["attribute_order"])
    if "stop" in raw:
        kw["stop"] = _stop(where, raw["stop"])
    if "predictors" in raw:
        if not isinstance(raw["predictors"], Mapping):
            raise ConfigError(f"{where}predictors: expected a mapping of predictor options")
        kw["predictors"] = dict(raw["predictors"])
    return DesignSpec(**kw)


def _predictor_order(where: str, value: Any) -> str | tuple[str, ...]:
    if value in ("pbdf", "ofat"):
        return value
    if isinstance(value, list) and value and all(v in PREDICTOR_NAMES for v in value):
        if len(set(value)) != len(value):
            raise ConfigError(f"{where}predictor_order: {value} repeats a predictor")
        return tuple(value)
    raise ConfigError(
        f"{where}predictor_order: expected 'pbdf', 'ofat' or a list of predictors, "
        f"got {value!r}",
        hint="predictors: " + ", ".join(PREDICTOR_NAMES),
    )


def _attribute_order(where: str, value: Any) -> str | dict[str, tuple[str, ...]]:
    if value in ("pbdf", "ofat"):
        return value
    if isinstance(value, Mapping):
        out = {}
        for pred, attrs in value.items():
            if pred not in (*PREDICTOR_NAMES, "f_T"):
                raise ConfigError(
                    f"{where}attribute_order.{pred}: unknown predictor",
                    hint="valid: " + ", ".join((*PREDICTOR_NAMES, "f_T")),
                )
            if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
                raise ConfigError(f"{where}attribute_order.{pred}: expected a list of names")
            out[pred] = tuple(attrs)
        return out
    raise ConfigError(
        f"{where}attribute_order: expected 'pbdf', 'ofat' or a mapping predictor -> "
        "attribute list"
    )


def _stop(where: str, value: Any) -> StopRule:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}stop: expected a mapping with keys " + ", ".join(_STOP_KEYS))
    _reject_unknown(f"{where}stop.", value, _STOP_KEYS)
    kw: dict[str, Any] = {}
    if "error_pct" in value:
        kw["error_pct"] = _number(f"{where}stop.error_pct", value["error_pct"])
    if "min_samples" in value:
        kw["min_samples"] = int(_number(f"{where}stop.min_samples", value["min_samples"], 1))
    if value.get("max_runs") is not None:
        kw["max_runs"] = int(_number(f"{where}stop.max_runs", value["max_runs"], 1))
    if value.get("patience") is not None:
        kw["patience"] = int(_number(f"{where}stop.patience", value["patience"], 1))
    if value.get("agreement_pct") is not None:
        kw["agreement_pct"] = _number(f"{where}stop.agreement_pct", value["agreement_pct"])
    if value.get("max_learning_s") is not None:
        kw["max_learning_s"] = _number(f"{where}stop.max_learning_s", value["max_learning_s"])
    return StopRule(**kw)
