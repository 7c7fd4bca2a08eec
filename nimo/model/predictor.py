"""A fitted predictor function f(rho) for one target (o_a, o_n, o_d, D or T).

Prediction (Algorithm 6 step 4, extended): ``z_j = x_j / scale_j`` for the attributes used,
``eta = [1, terms(z)] @ params`` and ``f = y_scale * eta`` (response ``identity``) or
``f = y_scale * exp(eta)`` (response ``log``; this is the median, not the mean, of a
log-normal error). Imports only numpy, the stdlib and ``nimo.errors``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nimo.errors import ModelError
from nimo.finite import finite_or_none
from nimo.metrics import fit_error_weights
from nimo.model.features import Term, design_matrix

TARGETS = ("o_a", "o_n", "o_d", "D", "T")
RESPONSES = ("identity", "log")
# a new run's noise: resid_var, or resid_var * eta^2 (nimo.predictors.variance)
CONSTANT, RELATIVE = "constant", "relative"


def hat_loo(A: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(LOO predictions of r, leverages h) of the OLS fit of r on design A.

    ``loo_i = r_i - e_i / (1 - h_ii)``; a rank-deficient A is projected on its column space
    (SVD); points of leverage ~1 get NaN.
    """
    Q, R = np.linalg.qr(A)
    d = np.abs(np.diag(R))
    if d.size and d.min() <= 1e-10 * d.max():  # rank deficient: orthonormal basis by SVD
        U, s, _ = np.linalg.svd(A, full_matrices=False)
        Q = U[:, s > 1e-10 * s.max()]
    fitted = Q @ (Q.T @ r)
    h = np.einsum("ij,ij->i", Q, Q)
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = r - (r - fitted) / (1.0 - h)
    loo[h > 1.0 - 1e-10] = np.nan
    return loo, h


def relative_rows(y: np.ndarray, y_scale: float) -> np.ndarray:
    """Row weights of a relative weighted fit: ``1 / y`` on the normalised scale (floored
    as :func:`nimo.metrics.fit_error_weights` floors it), so each row's residual is its
    relative error."""
    return fit_error_weights(y) * y_scale


def jsonable(x: Any) -> Any:
    """Plain JSON values: numpy scalars/arrays to Python, NaN/inf to null."""
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return finite_or_none(x)
    return x


@dataclass(frozen=True, eq=False)
class FittedPredictor:
    """Plain, serialisable result of :func:`nimo.predictors.fit_predictor`.

    ``attribute_names`` lists ALL space attributes: the column order of the ``X`` given to
    :meth:`predict`. ``attributes`` are the ones the terms use, ``reference`` their reference
    values and ``scale`` the divisors actually used for normalisation. ``y_ref`` is the
    reference value of the target, ``y_scale`` the divisor actually used (equal to ``y_ref``
    unless that is ~0). ``params``/``cov`` are on the normalised (or log) scale, intercept
    first; ``resid_var`` is the residual variance there (NaN when ``dof`` is 0).
    """

    target: str
    attribute_names: tuple[str, ...]
    attributes: tuple[str, ...] = ()
    reference: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()
    y_ref: float = 1.0
    y_scale: float = 1.0
    response: str = "identity"
    terms: tuple[Term, ...] = ()
    params: np.ndarray = field(default_factory=lambda: np.ones(1))
    cov: np.ndarray = field(default_factory=lambda: np.zeros((1, 1)))
    resid_var: float = float("nan")
    variance: str = CONSTANT  # or RELATIVE: a new run's noise is resid_var * eta^2
    dof: int = 0
    n_train: int = 0
    loo_mape: float | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    # fitted by least squares weighted by 1/y^2 (relative errors); changes only a refit
    weighted: bool = False
    _cols: list[int] = field(init=False, repr=False, compare=False)  # attributes' columns

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ModelError(f"unknown target {self.target!r}", hint="valid: " + ", ".join(TARGETS))
        if self.response not in RESPONSES:
            raise ModelError(f"unknown response transform {self.response!r}")
        if self.variance not in (CONSTANT, RELATIVE) or (
                self.variance == RELATIVE and self.response != "identity"):
            raise ModelError(f"predictor {self.target}: bad variance {self.variance!r}",
                             hint="valid: constant, or relative with an identity response")
        p = 1 + len(self.terms)
        params = np.asarray(self.params, dtype=float).reshape(-1)
        cov = np.asarray(self.cov, dtype=float)
        if params.shape != (p,) or cov.shape != (p, p):
            raise ModelError(f"predictor {self.target}: params/covariance do not match {p} terms")
        if not (len(self.attributes) == len(self.reference) == len(self.scale)):
            raise ModelError(f"predictor {self.target}: attributes/reference/scale lengths differ")
        if any(not (v > 0 and math.isfinite(v)) for v in self.scale) or not (
            self.y_scale > 0 and math.isfinite(self.y_scale)
        ):
            raise ModelError(f"predictor {self.target}: scales must be finite and > 0")
        for a in self.attributes:
            if a not in self.attribute_names:
                raise ModelError(f"predictor {self.target} uses unknown attribute {a!r}")
        for t in self.terms:
            for a in t.attrs:
                if a not in self.attributes:
                    raise ModelError(f"predictor {self.target}: term uses {a!r}, not an attribute")
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "cov", cov)
        object.__setattr__(self, "_cols", [self.attribute_names.index(a) for a in self.attributes])

    # -- construction ----------------------------------------------------------------
    @classmethod
    def constant(
        cls, target: str, value: float, attribute_names: Sequence[str], n_train: int = 1
    ) -> FittedPredictor:
        """Algorithm 1 step 1: ``f = value`` (no attributes, unknown variance)."""
        scale = abs(value) if value != 0 else 1.0
        return cls(target=target, attribute_names=tuple(attribute_names), y_ref=float(value),
                   y_scale=float(scale), params=np.array([value / scale]),
                   cov=np.full((1, 1), np.nan), n_train=n_train)

    # -- evaluation ------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        return not self.terms

    def normalise(self, X: np.ndarray) -> np.ndarray:
        """Columns of the used attributes divided by their scales (n x len(attributes))."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != len(self.attribute_names):
            raise ModelError(
                f"predictor {self.target} expects {len(self.attribute_names)} columns "
                f"({', '.join(self.attribute_names)}), got {X.shape[1]}"
            )
        return X[:, self._cols] / np.asarray(self.scale, dtype=float)

    def design(self, X: np.ndarray) -> np.ndarray:
        """Design matrix (intercept first) of rows X over ALL space attributes."""
        return design_matrix(self.terms, self.normalise(X), self.attributes)

    def _eta(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = self.design(X)
        return A, A @ self.params

    def _back(self, eta: np.ndarray) -> np.ndarray:
        if self.response != "log":
            return self.y_scale * eta
        with np.errstate(over="ignore"):  # inf far out of range; the bounds hold it
            return self.y_scale * np.exp(eta)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted target for each row of X (columns = ``attribute_names``)."""
        return self._back(self._eta(X)[1])

    def predict_var(self, X: np.ndarray) -> np.ndarray:
        """Variance of a NEW observation at each row: ``a' C a + s^2`` on the regression scale,
        mapped to the original scale (times ``y_scale^2``; for a log response also times
        ``f^2``, the delta method). NaN where unknown (no residual degrees of freedom)."""
        A, eta = self._eta(X)
        noise = self.resid_var * eta**2 if self.variance == RELATIVE else self.resid_var
        v = np.einsum("ij,jk,ik->i", A, self.cov, A) + noise
        if self.response == "log":
            with np.errstate(over="ignore"):
                return v * self._back(eta) ** 2
        with np.errstate(over="ignore"):  # a T near the float limit: inf, not an error
            return v * np.float64(self.y_scale) ** 2

    # -- leave-one-out ---------------------------------------------------------------
    def loo_predictions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Closed-form LOO predictions of this predictor's design refitted on (X, y).

        Uses the hat matrix of the CHOSEN design (term selection is not redone per left-out
        point, so this is optimistic w.r.t. selection). For a log response the LOO runs on
        the log scale and is exponentiated. Points of leverage 1 give NaN.
        """
        y = np.asarray(y, dtype=float).reshape(-1)
        A, r = self.design(X), self._response(y)
        if not self.weighted:
            return self._back(hat_loo(A, r)[0])
        s = relative_rows(y, self.y_scale)
        return self._back(hat_loo(A * s[:, None], r * s)[0] / s)

    def _response(self, y: np.ndarray) -> np.ndarray:
        z = y / self.y_scale
        if self.response == "log":
            if np.any(z <= 0):
                raise ModelError(f"predictor {self.target}: log response needs y > 0")
            return np.log(z)
        return z

    # -- serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "attributes": list(self.attributes),
            "reference": [float(v) for v in self.reference],
            "scale": [float(v) for v in self.scale],
            "y_ref": float(self.y_ref),
            "y_scale": float(self.y_scale),
            "response": self.response,
            "terms": [t.to_dict() for t in self.terms],
            "labels": ["1", *(t.label for t in self.terms)],
            "params": [float(v) for v in self.params],
            "cov": [[finite_or_none(v) for v in row] for row in self.cov],
            "resid_var": finite_or_none(self.resid_var),
            **({"variance": self.variance} if self.variance != CONSTANT else {}),
            **({"weighted": True} if self.weighted else {}),
            "dof": int(self.dof),
            "n_train": int(self.n_train),
            "loo_mape": finite_or_none(self.loo_mape),
            "info": jsonable(self.info),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], attribute_names: Sequence[str]) -> FittedPredictor:
        """Inverse of :meth:`to_dict`; raises ModelError naming a missing/corrupt field."""
        where = f"predictor {d.get('target', '?')!r}" if isinstance(d, Mapping) else "predictor"
        if not isinstance(d, Mapping):
            raise ModelError("corrupt cost model: a predictor is not an object")
        try:
            def nan(v: Any) -> float:
                return float("nan") if v is None else float(v)

            loo = d.get("loo_mape")
            return cls(
                target=str(d["target"]),
                attribute_names=tuple(attribute_names),
                attributes=tuple(str(a) for a in d["attributes"]),
                reference=tuple(float(v) for v in d["reference"]),
                scale=tuple(float(v) for v in d["scale"]),
                y_ref=float(d["y_ref"]),
                y_scale=float(d["y_scale"]),
                response=str(d["response"]),
                terms=tuple(Term.from_dict(t) for t in d["terms"]),
                params=np.array([float(v) for v in d["params"]]),
                cov=np.array([[nan(v) for v in row] for row in d["cov"]], dtype=float),
                resid_var=nan(d.get("resid_var")),
                variance=str(d.get("variance", CONSTANT)),
                dof=int(d.get("dof", 0)),
                n_train=int(d.get("n_train", 0)),
                loo_mape=None if loo is None else float(loo),
                info=dict(d.get("info") or {}),
                weighted=bool(d.get("weighted", False)),
            )
        except KeyError as e:
            raise ModelError(f"corrupt cost model: {where} lacks field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            if isinstance(e, ModelError):
                raise
            raise ModelError(f"corrupt cost model: {where} has a malformed field ({e})") from None
