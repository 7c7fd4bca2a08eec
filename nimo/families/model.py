"""A fitted family: fit, predict with numpy, export/load, and update from sufficient
statistics (linear forms only).

Families: ``nimo`` (this project's automatic term selection, ``nimo.predictors`` on ``T``),
``paper`` (the NIMO paper's form: one identity-or-reciprocal term per attribute), the linear
forms of :mod:`nimo.families.linear`, ``knn`` (:mod:`nimo.families.knn`) and the
scikit-learn families of :mod:`nimo.families.learned`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nimo.errors import DataError, ModelError
from nimo.families import knn, learned, linear
from nimo.families.encoding import Encoder, Row

FAMILIES = ("nimo", "paper", *linear.LINEAR_FORMS, "knn", *learned.LEARNED)
FORMAT = "nimo-family-model"
VERSION = 1
HOLD_FACTOR = 4.0  # a non-positive or NaN prediction becomes min T / 4 (+inf: max T x 4)


def check_family(name: str, where: str = "family") -> str:
    if name not in FAMILIES:
        raise ModelError(f"{where}: unknown family {name!r}", hint="valid: " + ", ".join(FAMILIES))
    return name


# training keys a cross-validated choice writes (nimo.families.select): how the family was
# chosen, every candidate's MAPE (%), the interval from the chosen one's out-of-fold errors
CHOICE_KEYS = ("chosen_by", "honest_error_pct", "interval")


@dataclass(frozen=True, eq=False)
class FamilyModel:
    """Predicts a run time T from rows ``{attribute: number or category}``."""

    family: str
    encoder: Encoder
    params: Mapping[str, Any]
    training: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_family(self.family)

    @property
    def names(self) -> tuple[str, ...]:
        return self.encoder.names

    def predict(self, rows: Sequence[Row]) -> np.ndarray:
        """Predicted T for each row (numpy only), never zero, negative or non-finite: such a
        prediction (a linear form extrapolating) is held at the fastest run / HOLD_FACTOR
        (+inf at the slowest x HOLD_FACTOR). Finite positive predictions are unchanged, so a
        scale extrapolation beyond the runs keeps its value. Far out of range (a knob at
        1e300) the raw prediction overflows to inf or NaN without numpy's warnings: held."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            raw = self._raw(rows)
        return held(raw, self.training.get("t_range"))

    def _raw(self, rows: Sequence[Row]) -> np.ndarray:
        if not rows:
            return np.empty(0)
        f = self.family
        if f in linear.LINEAR_FORMS:
            return linear.predict(f, self.encoder, np.asarray(self.params["coef"]), rows)
        if f == "knn":
            return knn.predict(self.encoder, self.params, rows)[0]
        if f in learned.LEARNED:
            return learned.predict(f, self.encoder, self.params, rows)
        return _predictor(self).predict(_term_matrix(self.encoder, rows))

    def update(self, rows: Sequence[Row], T: np.ndarray) -> FamilyModel:
        """This model with the observed runs added (linear forms: fixed-size statistics,
        equal to the batch fit of all runs)."""
        if self.family not in linear.LINEAR_FORMS:
            raise ModelError(f"family {self.family} cannot be updated incrementally",
                             hint="updatable: " + ", ".join(linear.LINEAR_FORMS))
        H = linear.basis(self.family, self.encoder, rows)
        stats = linear.Stats.from_dict(self.params["stats"]).plus(
            H, linear.response(self.family, T))
        coef = linear.solve(self.family, stats)
        # a cross-validated choice scored the runs before these: it no longer holds
        training = {**{k: v for k, v in self.training.items() if k not in CHOICE_KEYS},
                    "runs": stats.n}
        if "t_range" in self.training:  # a model written before t_range keeps its 1e-9 s floor
            training.update(_t_range(T, self.training["t_range"]))
        if "measured_range" in self.training:
            training.update(_ranges(rows, list(self.training["measured_range"]),
                                    self.training["measured_range"]))
        return FamilyModel(self.family, self.encoder,
                           {"coef": coef.tolist(), "stats": stats.to_dict()}, training)

    def to_dict(self) -> dict[str, Any]:
        from nimo.model.predictor import jsonable

        return {"format": FORMAT, "version": VERSION, "family": self.family,
                "needs": "numpy", "encoder": self.encoder.to_dict(),
                "params": jsonable(self.params), "training": jsonable(self.training)}

    @classmethod
    def from_dict(cls, d: Any) -> FamilyModel:
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise ModelError("not a NIMO family model", hint=f"expected \"format\": \"{FORMAT}\"")
        if not isinstance(d.get("version"), int) or d["version"] > VERSION:
            raise ModelError(f"family model: unsupported version {d.get('version')!r}")
        for key in ("family", "encoder", "params"):
            if key not in d:
                raise ModelError(f"corrupt family model: lacks field {key!r}")
        return cls(str(d["family"]), Encoder.from_dict(d["encoder"]), dict(d["params"]),
                   dict(d.get("training") or {}))


def fit_family(family: str, rows: Sequence[Row], T: Sequence[float] | np.ndarray, *,
               numeric: Sequence[str], categorical: Sequence[str] = (),
               load: Sequence[str] = ()) -> FamilyModel:
    """Fit ``family`` on ``rows`` (mappings of the attributes) and their run times."""
    check_family(family)
    y = np.asarray(T, dtype=float).reshape(-1)
    if len(rows) != y.size or y.size == 0:
        raise DataError(f"family {family}: {len(rows)} rows but {y.size} run times")
    if np.any(y <= 0) or not np.all(np.isfinite(y)):
        raise DataError(f"family {family}: run times must be finite and > 0")
    enc = Encoder.fit(rows, numeric, categorical, load)
    training = {"runs": int(y.size), **_t_range(y), **_ranges(rows, numeric)}
    if family in linear.LINEAR_FORMS:
        stats = linear.fit_stats(family, enc, rows, y)
        coef = linear.solve(family, stats)
        return FamilyModel(family, enc, {"coef": coef.tolist(), "stats": stats.to_dict()},
                           training)
    if family == "knn":
        return FamilyModel(family, enc, knn.fit(enc, rows, y), training)
    if family in learned.LEARNED:
        return FamilyModel(family, enc, learned.fit(family, enc, rows, y), training)
    return FamilyModel(family, enc, {"predictor": _fit_nimo(family, enc, rows, y)}, training)


def _t_range(T: Any, before: Sequence[float] | None = None) -> dict[str, list[float]]:
    """``{"t_range": [fastest, slowest]}`` over ``T`` and the range ``before``."""
    y = np.asarray(T, dtype=float).reshape(-1)
    lo, hi = float(y.min()), float(y.max())
    if before is not None:
        lo, hi = min(lo, float(before[0])), max(hi, float(before[1]))
    return {"t_range": [lo, hi]}


def _ranges(rows: Sequence[Row], names: Sequence[str],
            before: Mapping[str, Sequence[float]] | None = None) -> dict[str, Any]:
    """``{"measured_range": {attribute: [lo, hi]}}`` of the numeric ``names`` over ``rows``
    and the ranges ``before`` (``nimo predict`` warns of a value outside)."""
    out = {}
    for n in names:
        v = [float(r[n]) for r in rows] + [float(x) for x in (before or {}).get(n, ())]
        out[n] = [min(v), max(v)]
    return {"measured_range": out}


def held(T: np.ndarray, t_range: Sequence[float] | None) -> np.ndarray:
    """``T`` with zero, negative and non-finite values held inside the runs' range widened by
    HOLD_FACTOR (models written before ``t_range`` existed: a positive floor of 1e-9 s)."""
    T = np.asarray(T, dtype=float)
    bad = ~(np.isfinite(T) & (T > 0))
    if not bad.any():
        return T
    lo, hi = ((float(t_range[0]) / HOLD_FACTOR, float(t_range[1]) * HOLD_FACTOR)
              if t_range else (1e-9, np.inf))
    return np.where(bad, np.where(T == np.inf, hi, lo), T)


def _term_matrix(enc: Encoder, rows: Sequence[Row]) -> np.ndarray:
    return np.hstack([enc.numbers(rows), enc.onehot(rows, drop_first=True)])


def _fit_nimo(family: str, enc: Encoder, rows: Sequence[Row], y: np.ndarray) -> dict[str, Any]:
    from nimo.predictors import PredictorOptions, fit_predictor

    X = _term_matrix(enc, rows)
    names = [*enc.numeric, *enc.onehot_labels(drop_first=True)]
    levels = {n: sorted(set(X[:, j].tolist())) for j, n in enumerate(names)}
    reference = [max(lv) if lv and max(lv) > 0 else 1.0 for lv in levels.values()]
    opts = PredictorOptions(mode="auto" if family == "nimo" else "paper", final_fit="numpy")
    p = fit_predictor("T", X, y, names, names, reference, float(np.median(y)), levels, opts)
    return p.to_dict()


def _predictor(model: FamilyModel) -> Any:
    from nimo.model.predictor import FittedPredictor

    names = [*model.encoder.numeric, *model.encoder.onehot_labels(drop_first=True)]
    return FittedPredictor.from_dict(model.params["predictor"], names)
