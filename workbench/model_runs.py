"""Runs measured elsewhere, read from a CSV for ``nimo model score`` and ``nimo model update``.

One row per run: a column per model attribute (numbers; category strings for a family
model's categorical attributes) and the run time (``T`` or ``--time-column``). Errors name
the file, line and column.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import DataError
from workbench.csvfile import attribute_value


@dataclass(frozen=True)
class Runs:
    rows: list[dict[str, Any]]
    T: np.ndarray
    lines: list[int]


def read_runs(path: str | Path, attributes: Sequence[str], categorical: Sequence[str] = (),
              time_column: str = "T") -> Runs:
    p = str(path)
    if time_column in attributes:
        raise DataError(f"{p}: --time-column {time_column!r} is an attribute of the model, "
                        "not a run time", hint="attributes: " + ", ".join(attributes))
    try:
        fh = open(p, newline="", encoding="utf-8-sig")  # noqa: SIM115 - closed below
    except OSError as e:
        raise DataError(f"{p}: cannot read ({e.strerror})") from None
    with fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in reader.fieldnames or []]
        for c in (*attributes, time_column):
            if c not in header:
                raise DataError(f"{p}:1: no column {c!r} (the model needs it)",
                                hint="columns: " + ", ".join(header) if header else None)
        rows, times, lines = [], [], []
        for row in reader:
            line = reader.line_num
            clean = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            rows.append({a: clean[a] if a in categorical
                         else attribute_value(p, line, a, _number(p, line, a, clean[a]))
                         for a in attributes})
            T = _number(p, line, time_column, clean[time_column])
            if T <= 0:
                raise DataError(f"{p}:{line}: {time_column} must be > 0 (got {T:g})")
            times.append(T)
            lines.append(line)
    if not rows:
        raise DataError(f"{p}: no runs")
    return Runs(rows, np.array(times), lines)


def _number(p: str, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{p}:{line}: column {column!r} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise DataError(f"{p}:{line}: column {column!r} is not finite: {text!r}")
    return value
