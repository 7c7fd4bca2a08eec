"""A Gaussian-process correction of a parametric model's residuals (numpy only).

The parametric forms are the prior mean; a zero-mean Gaussian process over the training
assignments (rank-scaled, :func:`nimo.model.support.rank_scaled`) models what they miss in
log T: a memory cliff, a saturation knee, an interaction no term has. Near the measurements
the prediction follows them, far from every measurement the correction fades and the
parametric form speaks alone. The kernel is squared-exponential with a length scale per
attribute, ``k(x, x') = signal * exp(-sum_j (x_j - x'_j)^2 / (2 l_j^2))``, plus ``noise`` on
the diagonal; :mod:`nimo.predictors.residual` fits it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nimo.model.support import rank_scaled

MAX_LOG_FACTOR = 5.0


@dataclass(frozen=True)
class Hyper:
    """Per-attribute length scales (rank-scaled units), signal and noise variances."""

    lengthscales: tuple[float, ...]
    signal: float
    noise: float


@dataclass(frozen=True, eq=False)
class ResidualField:
    """Log-residuals ``log T_i - log T_param(x_i)`` at the training rows, and the kernel."""

    levels: Sequence[Sequence[float]]  # each attribute's levels (held as float lists)
    rows: np.ndarray
    residuals: np.ndarray
    hyper: Hyper
    _alpha: np.ndarray = field(init=False, repr=False)
    _scaled: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", [[float(v) for v in lv] for lv in self.levels])
        scaled = rank_scaled(self.levels, self.rows)
        K = kernel(scaled, scaled, self.hyper) + self.hyper.noise * np.eye(len(scaled))
        chol = np.linalg.cholesky(K)
        alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, self.residuals))
        object.__setattr__(self, "_scaled", scaled)
        object.__setattr__(self, "_alpha", alpha)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The log-correction (posterior mean) at rows X."""
        return kernel(rank_scaled(self.levels, X), self._scaled, self.hyper) @ self._alpha

    def factor(self, X: np.ndarray) -> np.ndarray:
        """The factor on the parametric T at rows X (at most e^5 either way)."""
        return np.exp(np.clip(self.predict(X), -MAX_LOG_FACTOR, MAX_LOG_FACTOR))

    def to_dict(self) -> dict[str, Any]:
        return {"residuals": [float(r) for r in self.residuals],
                "lengthscales": [float(v) for v in self.hyper.lengthscales],
                "signal": self.hyper.signal, "noise": self.hyper.noise}


def kernel(A: np.ndarray, B: np.ndarray, h: Hyper) -> np.ndarray:
    inv = 1.0 / np.asarray(h.lengthscales, float)
    A, B = A * inv, B * inv
    d2 = np.maximum((A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :]
                    - 2.0 * A @ B.T, 0.0)
    return h.signal * np.exp(-0.5 * d2)


def residual_from(d: Any, levels: Sequence[Sequence[float]],
                  support: Sequence[Sequence[float]] | None) -> ResidualField | None:
    """The ``residual`` field of a model's JSON over its support rows (None when absent)."""
    if d is None:
        return None
    if not isinstance(d, Mapping) or support is None:
        raise ValueError("'residual' needs 'support' and must be an object")
    r = np.asarray([float(v) for v in d["residuals"]], float)
    if r.size != len(support):
        raise ValueError("'residual.residuals' must have one value per support row")
    scales = tuple(float(v) for v in d["lengthscales"])
    if len(scales) != len(levels) or not all(v > 0 for v in scales):
        raise ValueError("'residual.lengthscales' must hold one positive number per attribute")
    hyper = Hyper(scales, float(d["signal"]), float(d["noise"]))
    if not (hyper.signal >= 0 and hyper.noise > 0 and np.isfinite(r).all()):
        raise ValueError("'residual' needs signal >= 0, noise > 0 and finite residuals")
    return ResidualField(levels, np.asarray(support, float), r, hyper)
