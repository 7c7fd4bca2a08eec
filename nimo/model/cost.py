"""The exportable cost model M(G, I, R): four predictors combined by Equation 2.

``kind='occupancy'``: ``T = f_D * (f_a + f_n + f_d)``; ``kind='direct'``: ``T = f_T`` (for
datasets that record only T). JSON layout: docs/model-format.md. Imports only numpy, the
stdlib, ``nimo.errors``, ``nimo.finite`` and ``nimo.metrics`` so that a scheduler can load
a model with numpy alone.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np

from nimo.errors import ConfigError, ModelError
from nimo.model.attributes import attribute_doc
from nimo.model.average import MemberAverage, average_from
from nimo.model.calibration import CV, calibration_of
from nimo.model.equation import KINDS, OCCUPANCIES, total_time
from nimo.model.gp import LogTProcess, blended
from nimo.model.monotone import MonotoneBound
from nimo.model.predictor import FittedPredictor, jsonable
from nimo.model.quantiles import two_sided
from nimo.model.residual import ResidualField
from nimo.model.support import (
    Support,
    bounds_from,
    clip_parts,
    clip_to_bounds,
    part_bounds_doc,
    support_from,
)
from nimo.model.validate import (
    assigned_value,
    attributes_from,
    calibration_from,
    field_of,
    kind_from,
    optional_fields,
    predictors_from,
    training_from,
)
from nimo.model.versions import VERSION, format_version

FORMAT = "nimo-cost-model"


class Prediction(NamedTuple):
    """Predicted run time with a two-sided interval (``std`` of a new run's time)."""

    mean: float
    lo: float
    hi: float
    std: float
    far: bool = False  # far from every training assignment (bounded models only)
    held: bool = False  # the form broke the order of the runs here: T held near them

    @property
    def is_time(self) -> bool:
        """Whether ``mean`` is a run time at all: a positive, finite number."""
        return math.isfinite(self.mean) and self.mean > 0


@dataclass(frozen=True, eq=False)
class CostModel:
    """Predicts a task's run time T on a resource assignment.

    ``attributes``: ``[{name, levels, direction, resource, unit}, ...]`` in the order of the
    columns given to :meth:`predict_many`. ``reference``: the reference assignment.
    ``predictors``: target -> :class:`FittedPredictor` for every target the kind needs.
    ``calibration``: ``{"method", "z"}`` (:func:`calibration_of`), the sorted studentized
    residuals of T that widen the intervals; empty when unknown (purely parametric).
    """

    attributes: list[dict[str, Any]]
    reference: dict[str, float]
    kind: str
    predictors: dict[str, FittedPredictor]
    training: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    calibration: dict[str, Any] = field(default_factory=dict)
    # bounded models (predictors.bounded): predicted T held in bounds; training assignments
    bounds: tuple[float, float] | None = None
    part_bounds: dict[str, tuple[float, float]] = field(default_factory=dict)  # target: range
    support: list[list[float]] | None = None
    # a Gaussian-process correction of the parametric T's log-residuals over the support
    residual: ResidualField | None = None
    gp: LogTProcess | None = None  # blended in (nimo.planner.blend): T^(1-w c) G^(w c)
    gp_weight: float = 0.0
    monotone: MonotoneBound | None = None  # over the support's runs (predictors.monotone)
    average: MemberAverage | None = None  # with alternative fits (predictors.committee_mean)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ModelError(f"unknown cost-model kind {self.kind!r}",
                             hint="valid: " + ", ".join(KINDS))
        missing = [t for t in KINDS[self.kind] if t not in self.predictors]
        if missing:
            raise ModelError(f"{self.kind} cost model lacks predictor(s) {', '.join(missing)}")
        names = self.names
        for target, p in self.predictors.items():
            if p.target != target:
                raise ModelError(f"corrupt cost model: predictor {target!r} has target "
                                 f"{p.target!r}")
            if tuple(p.attribute_names) != names:
                raise ModelError(f"predictor {target} was fitted over other attributes")
        z = self.calibration.get("z", [])
        if not isinstance(z, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
            for v in z
        ):
            raise ModelError("corrupt cost model: 'calibration.z' must list numbers >= 0")
        object.__setattr__(self, "calibration", {**self.calibration, "z": sorted(map(float, z))}
                           if z else {})
        if not self.created_at:
            now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
            object.__setattr__(self, "created_at", now)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """Attributes whose effect no successful run measured (every run varying them
        failed): the model cannot know it, and ``nimo predict`` says so."""
        return tuple(str(a["name"]) for a in self.attributes if a.get("unmeasured"))

    def with_unmeasured(self, names: Sequence[str]) -> CostModel:
        """This model with exactly ``names`` marked as attributes it never measured."""
        unmarked = [{k: v for k, v in a.items() if k != "unmeasured"} for a in self.attributes]
        marked = [{**a, "unmeasured": True} if a["name"] in names else a for a in unmarked]
        return replace(self, attributes=marked)

    def calibrated(self, calibration: Mapping[str, Any]) -> CostModel:
        """This model with ``calibration`` (see the class docstring) for its intervals."""
        return replace(self, calibration=dict(calibration))

    def calibrated_on(
        self, cases: Sequence[tuple[Mapping[str, float], float]], method: str
    ) -> CostModel:
        """This model calibrated on measured ``(assignment, T)`` runs it was not trained on
        (split conformal: valid for assignments drawn like ``cases``); unchanged when fewer
        than ``MIN_CALIBRATION_RUNS`` are usable."""
        if not cases:
            return self
        X = np.vstack([self.row(a) for a, _ in cases])
        mean, var, _ = self.delivered_var_many(X)
        calibration = calibration_of(method, np.array([T for _, T in cases], float), mean, var)
        return self.calibrated(calibration) if calibration else self

    def interval_multiplier(self, level: float, dof: float) -> float:
        """Half-width of the ``level`` interval in predictive stds: the Student-t quantile, or
        the conformal quantile of the studentized LOO residuals when that is larger (rank
        ``ceil((n + 1) level)``, at most n); a blended model (whose T its predictors' sd does
        not describe) or out-of-fold residuals (``CV``): that quantile alone."""
        q = two_sided(level, None if math.isinf(dof) else max(dof, 1.0))
        z = self.calibration.get("z") or []
        if z:
            k = min(math.ceil((len(z) + 1) * level), len(z))
            alone = self.calibration.get("method") == CV or (self.gp is not None and self.gp_weight)
            q = z[k - 1] if alone else max(q, z[k - 1])
        return q

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(str(a["name"]) for a in self.attributes)

    # -- prediction ------------------------------------------------------------------
    def row(self, assignment: Mapping[str, float]) -> np.ndarray:
        """One assignment as a 1 x k row in attribute order (ModelError names a missing one)."""
        missing = [n for n in self.names if n not in assignment]
        if missing:
            raise ModelError(f"assignment lacks attribute {missing[0]!r}",
                             hint="model attributes: " + ", ".join(self.names))
        return np.array([[assigned_value(n, assignment[n]) for n in self.names]])

    def predict_targets(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Each predictor's prediction for rows X."""
        X = self._matrix(X)
        return clip_parts({t: self.predictors[t].predict(X) for t in KINDS[self.kind]},
                          self.part_bounds)

    @np.errstate(all="ignore")  # far off the grid: inf/NaN, held in bounds or reported
    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """Predicted T for each row of X (columns in attribute order); vectorised."""
        T = total_time(self.predict_targets(X))
        return self._held(X, clip_to_bounds(self._corrected(X, T)[0], self.bounds))

    def _held(self, X: np.ndarray, T: np.ndarray) -> np.ndarray:
        """T held near the runs (monotone), then averaged with the alternatives, in bounds."""
        return self._held_steps(X, T)[1]

    def _held_steps(self, X: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(T held near the runs, that T averaged with the alternatives in bounds)."""
        X = self._matrix(X)
        near = T if self.monotone is None else self.monotone.hold(X, T)
        return near, near if self.average is None else clip_to_bounds(
            self.average.apply(X, near), self.bounds)

    def _corrected(self, X: np.ndarray, parametric: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray | float]:
        """(T at rows X with the residual correction and the blend, before the bounds; the
        factor on its spread). The blend starts from T held in the bounds (never NaN)."""
        factor = 1.0 if self.residual is None else self.residual.factor(self._matrix(X))
        T = parametric * factor
        if self.gp is None or not self.gp_weight:
            return T, factor
        held = clip_to_bounds(T, self.bounds)
        gp, informed = self.gp.predict_informed(self._matrix(X))
        out = blended(held, gp, self.gp_weight * informed)
        with np.errstate(divide="ignore", invalid="ignore"):
            return out, factor * np.where(T > 0, out / T, out / held)

    def predict(self, assignment: Mapping[str, float]) -> float:
        return float(self.predict_many(self.row(assignment))[0])

    @np.errstate(all="ignore")
    def predict_var_many(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, variance, effective dof) of T for rows X.

        Assumes the predictors' errors are independent. Occupancy kind: ``S = a+n+d`` has
        ``var S = va+vn+vd`` and ``var(D*S) = S^2 vD + D^2 vS + vD vS`` (exact for
        independent factors). The dof combine by Welch-Satterthwaite.
        """
        X = self._matrix(X)
        mean = self.predict_targets(X)
        var = {t: self.predictors[t].predict_var(X) for t in KINDS[self.kind]}
        if self.kind == "direct":
            parts = {"T": var["T"]}
            m = mean["T"]
        else:
            S = mean["o_a"] + mean["o_n"] + mean["o_d"]
            D = mean["D"]
            parts = {t: D**2 * var[t] for t in OCCUPANCIES}
            parts["D"] = S**2 * var["D"]
            m = D * S
        total = cast(np.ndarray, sum(parts.values()))  # of arrays: an array
        if self.kind == "occupancy":
            total = total + var["D"] * (var["o_a"] + var["o_n"] + var["o_d"])
        denom = np.zeros_like(total)
        for t, c in parts.items():
            dof = self.predictors[t].dof
            if dof > 0:
                denom = denom + c**2 / dof
        with np.errstate(divide="ignore", invalid="ignore"):
            nu = np.where(denom > 0, total**2 / denom, np.inf)
        corrected, factor = self._corrected(X, m)
        return corrected, total * factor**2, nu

    def predict_interval(self, assignment: Mapping[str, float], level: float = 0.90) -> Prediction:
        """Mean and two-sided ``level`` interval of a new run's T (t quantile with the
        Satterthwaite dof, widened to the LOO calibration's quantile where that is larger;
        NaN bounds when a predictor's variance is unknown)."""
        if not 0.0 < level < 1.0:
            raise ConfigError(f"interval level must lie in (0, 1), got {level}")
        x = self.row(assignment)
        m, v, nu, by_runs = self._delivered(x)
        mean, var, dof, held = float(m[0]), float(v[0]), float(nu[0]), bool(by_runs[0])
        widen, far = self._widening(x)
        if not math.isfinite(var) or var < 0:
            return Prediction(mean, math.nan, math.nan, math.nan, far, held)
        std = math.sqrt(var) * widen
        q = self.interval_multiplier(level, dof)
        lo, hi = mean - q * std, mean + q * std
        if self.bounds is not None:  # both ends held where the mean is: a T the model rules out
            lo, hi = max(lo, self.bounds[0]), min(hi, self.bounds[1])
        return Prediction(mean, lo, hi, std, far, held)

    @np.errstate(all="ignore")
    def delivered_var_many(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``predict_var_many`` as the model delivers T: in its bounds, held near its runs
        and averaged (``predict_many``); the spread moves with the mean."""
        return self._delivered(X)[:3]

    @np.errstate(all="ignore")
    def _delivered(self, X: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``delivered_var_many`` and, per row, whether the runs held T (:attr:`held`)."""
        X = self._matrix(X)
        m, v, nu = self.predict_var_many(X)
        mean = clip_to_bounds(m, self.bounds)
        near, held = self._held_steps(X, mean)
        moved = np.isfinite(held) & np.isfinite(mean) & (mean != 0) & (held != mean)
        by_runs = ~np.isnan(mean) & (near != mean)  # the form broke the runs' order
        return held, v * np.where(moved, held / mean, 1.0) ** 2, nu, by_runs

    @np.errstate(all="ignore")
    def _widening(self, x: np.ndarray) -> tuple[float, bool]:
        """(interval factor, far flag) of one row: (1, False) without a support."""
        if not self.support:
            return 1.0, False
        cached = self.__dict__.get("_support_cache")
        if cached is None:
            levels = [a.get("levels", ()) for a in self.attributes]
            cached = Support(levels, self.support)
            object.__setattr__(self, "_support_cache", cached)
        factor, far = cached.widening(x)
        return float(factor[0]), bool(far[0])

    def _matrix(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != len(self.names):
            raise ModelError(f"expected {len(self.names)} columns ({', '.join(self.names)}), "
                             f"got {X.shape[1]}")
        return X

    # -- serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": format_version(self),
            "kind": self.kind,
            "created_at": self.created_at,
            "attributes": [attribute_doc(a) for a in self.attributes],
            "reference": {k: float(v) for k, v in self.reference.items()},
            "predictors": {t: p.to_dict() for t, p in self.predictors.items()},
            "training": jsonable(self.training),
            "calibration": jsonable(self.calibration),
            **({"bounds": [float(b) for b in self.bounds]} if self.bounds else {}),
            **({"part_bounds": part_bounds_doc(self.part_bounds)} if self.part_bounds else {}),
            **({"support": self.support} if self.support else {}),
            **({"residual": self.residual.to_dict()} if self.residual is not None else {}),
            **({"gp": {**self.gp.to_dict(), "weight": self.gp_weight}}
               if self.gp is not None else {}),
            **({"monotone": self.monotone.to_dict()} if self.monotone is not None else {}),
            **({"average": self.average.to_dict()} if self.average is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: Any) -> CostModel:
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise ModelError("not a NIMO cost model", hint=f"expected \"format\": \"{FORMAT}\"")
        version = d.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ModelError(f"corrupt cost model: bad field 'version' ({version!r})")
        if version > VERSION:
            raise ModelError(f"written by a newer NIMO: version {version} > {VERSION}")
        kind = kind_from(d, tuple(KINDS))
        attrs = attributes_from(field_of(d, "attributes"))
        names = [str(a["name"]) for a in attrs]
        preds = field_of(d, "predictors")
        if not isinstance(preds, Mapping):
            raise ModelError("corrupt cost model: field 'predictors' must be an object")
        ref = field_of(d, "reference")
        if not isinstance(ref, Mapping):
            raise ModelError("corrupt cost model: field 'reference' must be an object")
        try:
            reference = {str(k): float(v) for k, v in ref.items()}
        except (TypeError, ValueError):
            raise ModelError("corrupt cost model: field 'reference' has a non-number") from None
        support = support_from(d.get("support"), names)
        return cls(
            attributes=[dict(a) for a in attrs],
            reference=reference,
            kind=kind,
            predictors=predictors_from(preds, names),
            training=training_from(d.get("training")),
            created_at=str(d.get("created_at") or ""),
            calibration=calibration_from(d.get("calibration")),
            bounds=bounds_from(d.get("bounds")),
            support=support,
            average=average_from(d.get("average"), KINDS[kind], names),
            **optional_fields(d, KINDS[kind], attrs, support),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return path


def load_model(path: str | Path) -> CostModel:
    """Read a cost model written by :meth:`CostModel.save` (ModelError on any problem)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ModelError(f"cannot read cost model {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path} is not JSON (not a NIMO cost model)") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelError(f"{path} is not JSON (line {e.lineno}: {e.msg})") from None
    return CostModel.from_dict(d)
