"""Term specifications (plain data) and their numpy evaluation.

A predictor's regression works on *normalised* attributes ``z_j = x_j / s_j`` (Algorithm 6
step 3: ``s_j`` is the reference value ``x_j,ref``; when that is not positive, e.g. a latency of
0, ``s_j`` is the largest absolute level instead, see :func:`attribute_scale`).

A :class:`Term` is the product of one or two :class:`Factor` s; each factor applies a named
transform to one normalised attribute:

==================  =====================  ==========================================
transform           value                  captures
==================  =====================  ==========================================
``identity``        ``z``                  linear effects
``reciprocal``      ``1 / z``              time inversely proportional to speed
``log``             ``log z``              diminishing returns
``piecewise``       ``max(0, z - k)``      a change of slope above knot ``k``
``piecewise_below`` ``max(0, k - z)``      a change of slope below ``k`` (memory cliff,
                                           saturation: flat above ``k``)
``step_below``      ``1 if z < k else 0``  a jump below ``k`` (a memory cliff: a
                                           working set that no longer fits; with a log
                                           response, a factor on time)
``level``           ``1 if z == k else 0``  one level of a categorical attribute (its
                                           code; an algorithm variant, instance family)
==================  =====================  ==========================================

Knots ``k`` are on the normalised scale. ``reciprocal`` and ``log`` need ``z > 0``. A term
with two factors is a pairwise interaction. A hinge may apply to a *ratio* ``z_a / z_b``
instead of one attribute (``over=b``): ``max(0, k - mem/input)`` is a memory cliff whose
edge moves with the input (a working set that grows with the load). The design matrix
always starts with the intercept column. Imports only numpy and the stdlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimo.errors import ModelError

TRANSFORMS = ("identity", "reciprocal", "log", "piecewise", "piecewise_below", "step_below",
              "level")
POSITIVE_ONLY = ("reciprocal", "log")
KNOTTED = ("piecewise", "piecewise_below")  # hinges
WITH_KNOT = (*KNOTTED, "step_below", "level")  # transforms that take a knot


@dataclass(frozen=True)
class Factor:
    """``transform(z_attr)``, or with ``over`` a hinge of the ratio ``z_attr / z_over``;
    ``knot`` (normalised scale) only for the piecewise transforms and ``level`` (the level's
    normalised code)."""

    attr: str
    transform: str = "identity"
    knot: float | None = None
    over: str | None = None

    def __post_init__(self) -> None:
        if self.transform not in TRANSFORMS:
            raise ModelError(
                f"unknown transform {self.transform!r}", hint="valid: " + ", ".join(TRANSFORMS)
            )
        if (self.transform in WITH_KNOT) != (self.knot is not None):
            raise ModelError(f"transform {self.transform!r} of {self.attr!r}: bad knot")
        if self.over is not None and (self.transform not in KNOTTED or self.over == self.attr):
            raise ModelError(f"ratio {self.attr}/{self.over}: only a hinge of two attributes",
                             hint="transforms: " + ", ".join(KNOTTED))

    @property
    def attrs(self) -> tuple[str, ...]:
        return (self.attr,) if self.over is None else (self.attr, self.over)

    def column(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The normalised values this factor transforms: its attribute's, or the ratio."""
        z = columns[self.attr]
        return z if self.over is None else z / columns[self.over]

    def evaluate(self, z: np.ndarray) -> np.ndarray:
        """The transform applied to a column of normalised values."""
        t = self.transform
        if t == "identity":
            return z
        if t == "piecewise":
            return np.maximum(0.0, z - self.knot)
        if t == "piecewise_below":
            return np.maximum(0.0, self.knot - z)
        if t == "step_below":
            return (z < self.knot).astype(float)
        if t == "level":
            k = 0.0 if self.knot is None else self.knot  # never None (__post_init__)
            return (np.abs(z - k) <= 1e-9 * max(1.0, abs(k))).astype(float)
        if np.any(z <= 0):
            raise ModelError(f"transform {t!r} of attribute {self.attr!r} needs values > 0")
        return 1.0 / z if t == "reciprocal" else np.log(z)

    @property
    def label(self) -> str:
        if self.transform == "identity":
            return self.attr
        if self.transform == "level":
            return f"[{self.attr}={self.knot:g}]"
        if self.transform == "step_below":
            return f"[{self.attr}<{self.knot:g}]"
        if self.transform in KNOTTED:
            x = self.attr if self.over is None else f"{self.attr}/{self.over}"
            above = self.transform == "piecewise"
            return f"max(0,{x}-{self.knot:g})" if above else f"max(0,{self.knot:g}-{x})"
        return f"{self.transform}({self.attr})"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"attr": self.attr, "transform": self.transform}
        if self.knot is not None:
            d["knot"] = float(self.knot)
        if self.over is not None:
            d["over"] = self.over
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Factor:
        knot, over = d.get("knot"), d.get("over")
        return cls(str(d["attr"]), str(d.get("transform", "identity")),
                   None if knot is None else float(knot), None if over is None else str(over))


@dataclass(frozen=True)
class Term:
    """A regression term: one factor (main effect) or two (pairwise interaction)."""

    factors: tuple[Factor, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.factors) <= 2:
            raise ModelError(f"a term has 1 or 2 factors, not {len(self.factors)}")

    @classmethod
    def main(cls, attr: str, transform: str = "identity", knot: float | None = None) -> Term:
        return cls((Factor(attr, transform, knot),))

    @classmethod
    def interaction(cls, a: Factor, b: Factor) -> Term:
        return cls((a, b))

    @property
    def attrs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a for f in self.factors for a in f.attrs))

    @property
    def is_ratio(self) -> bool:
        return any(f.over is not None for f in self.factors)

    @property
    def is_interaction(self) -> bool:
        return len(self.factors) == 2

    @property
    def label(self) -> str:
        return "*".join(f.label for f in self.factors)

    def evaluate(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Value of the term given normalised columns keyed by attribute name."""
        out = self.factors[0].evaluate(self.factors[0].column(columns))
        for f in self.factors[1:]:
            out = out * f.evaluate(f.column(columns))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"factors": [f.to_dict() for f in self.factors]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Term:
        return cls(tuple(Factor.from_dict(f) for f in d["factors"]))


def attribute_scale(reference: float, levels: Sequence[float] = ()) -> float:
    """The divisor normalising an attribute: its reference value when positive, else the
    largest absolute level (so a latency with reference 0 maps onto [0, 1]), else 1."""
    if reference > 0:
        return float(reference)
    big = max((abs(float(v)) for v in levels), default=0.0)
    return big if big > 0 else 1.0


def design_matrix(
    terms: Sequence[Term], X_norm: np.ndarray, names: Sequence[str]
) -> np.ndarray:
    """``[1, term_1(z), ..., term_p(z)]`` for rows of normalised attributes.

    ``X_norm`` holds one column per name in ``names`` (any superset of the attributes the
    terms use). Returns an ``n x (1 + len(terms))`` float array.
    """
    Z = np.atleast_2d(np.asarray(X_norm, dtype=float))
    if Z.shape[1] != len(names):
        raise ModelError(f"design needs {len(names)} columns, got {Z.shape[1]}")
    cols = {name: Z[:, i] for i, name in enumerate(names)}
    out = np.empty((Z.shape[0], 1 + len(terms)))
    out[:, 0] = 1.0
    for j, term in enumerate(terms, start=1):
        missing = [a for a in term.attrs if a not in cols]
        if missing:
            raise ModelError(f"term {term.label} uses unknown attribute {missing[0]!r}")
        out[:, j] = term.evaluate(cols)
    return out
