"""Rows of mixed attributes (numbers and category strings) as numeric matrices.

Numeric attributes are divided by a fixed scale (the largest |value| seen at fit time, kept
on update so that sufficient statistics stay comparable); a categorical attribute becomes
one 0/1 column per category (``drop_first`` drops the first, for forms with an intercept).
The exported encoder maps the category strings; an unknown category is a ``ModelError``
naming the valid ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nimo.errors import DataError, ModelError

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Encoder:
    """How rows map to columns: numeric names with their scales, categorical names with
    their categories (sorted), and which numeric names are load (more = more work)."""

    numeric: tuple[str, ...]
    scale: tuple[float, ...]
    categorical: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    load: tuple[str, ...] = ()

    @classmethod
    def fit(cls, rows: Sequence[Row], numeric: Sequence[str], categorical: Sequence[str] = (),
            load: Sequence[str] = ()) -> Encoder:
        if not rows:
            raise DataError("no training rows")
        scale = []
        for name in numeric:
            values = numbers(rows, name)
            big = float(np.max(np.abs(values)))
            scale.append(big if big > 0 else 1.0)
        cats = {c: tuple(sorted({str(r[c]) for r in rows})) for c in categorical}
        return cls(tuple(numeric), tuple(scale), cats, tuple(a for a in load if a in numeric))

    @property
    def names(self) -> tuple[str, ...]:
        return (*self.numeric, *self.categorical)

    def numbers(self, rows: Sequence[Row]) -> np.ndarray:
        """n x len(numeric): the numeric attributes divided by their scales."""
        if not self.numeric:
            return np.empty((len(rows), 0))
        cols = [numbers(rows, n) / s for n, s in zip(self.numeric, self.scale, strict=True)]
        return np.column_stack(cols)

    def onehot(self, rows: Sequence[Row], drop_first: bool = False) -> np.ndarray:
        """n x (categories): one 0/1 column per category of each categorical attribute."""
        blocks = []
        for name, cats in self.categorical.items():
            index = {c: i for i, c in enumerate(cats)}
            block = np.zeros((len(rows), len(cats)))
            for i, r in enumerate(rows):
                value = _get(r, name)
                if str(value) not in index:
                    raise ModelError(f"attribute {name!r}: unknown category {value!r}",
                                     hint="valid: " + ", ".join(cats))
                block[i, index[str(value)]] = 1.0
            blocks.append(block[:, 1:] if drop_first else block)
        return np.hstack(blocks) if blocks else np.empty((len(rows), 0))

    def onehot_labels(self, drop_first: bool = False) -> list[str]:
        return [f"{n}={c}" for n, cats in self.categorical.items()
                for c in (cats[1:] if drop_first else cats)]

    def to_dict(self) -> dict[str, Any]:
        return {"numeric": list(self.numeric), "scale": [float(s) for s in self.scale],
                "categorical": {k: list(v) for k, v in self.categorical.items()},
                "load": list(self.load)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Encoder:
        try:
            return cls(tuple(str(n) for n in d["numeric"]), tuple(float(s) for s in d["scale"]),
                       {str(k): tuple(str(c) for c in v) for k, v in d["categorical"].items()},
                       tuple(str(n) for n in d.get("load", ())))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ModelError(f"corrupt family model: bad 'encoder' ({e})") from None


def _get(row: Row, name: str) -> Any:
    if name not in row:
        raise ModelError(f"row lacks attribute {name!r}")
    return row[name]


def numbers(rows: Sequence[Row], name: str) -> np.ndarray:
    """Column ``name`` of ``rows`` as finite floats (ModelError names a bad value)."""
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        value = _get(r, name)
        try:
            out[i] = float(value)
        except (TypeError, ValueError):
            raise ModelError(f"attribute {name!r} is not a number: {value!r}",
                             hint="name it as categorical") from None
        if not math.isfinite(out[i]):
            raise ModelError(f"attribute {name!r} is not finite: {value!r}")
    return out


def positive(Z: np.ndarray, encoder: Encoder, form: str) -> np.ndarray:
    """``Z`` itself, after checking every numeric value is > 0 (reciprocals, logs)."""
    if Z.size and np.any(Z <= 0):
        bad = encoder.numeric[int(np.where((Z <= 0).any(axis=0))[0][0])]
        raise ModelError(f"family {form}: attribute {bad!r} must be > 0 (reciprocal/log terms)")
    return Z
