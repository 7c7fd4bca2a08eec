"""Loading either kind of exported model: a NIMO cost model (``nimo-cost-model``) or a
family model (``nimo-family-model``, :mod:`nimo.families`), and predicting rows with it.

Rows are mappings ``{attribute: value}``; a family model takes category strings for its
categorical attributes, a cost model numbers only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import ModelError
from nimo.model.cost import FORMAT as COST_FORMAT
from nimo.model.cost import CostModel


def read_json(path: str | Path) -> Any:
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ModelError(f"cannot read model {path}: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ModelError(f"{path} is not JSON (not a NIMO model)") from None


def load_any(path: str | Path) -> Any:
    """A ``CostModel`` or a ``FamilyModel`` from ``path`` (ModelError otherwise)."""
    from nimo.families.model import FORMAT, FamilyModel

    d = read_json(path)
    if isinstance(d, Mapping) and d.get("format") == FORMAT:
        return FamilyModel.from_dict(d)
    try:
        return CostModel.from_dict(d)
    except ModelError as e:
        if isinstance(d, Mapping) and d.get("format") == COST_FORMAT:  # a corrupt cost model
            raise ModelError(f"{path}: {e.message}", hint=e.hint) from None
        raise ModelError(f"{path}: {e.message}", hint=f"expected a cost model or \"format\": "
                         f"\"{FORMAT}\"") from None


def attribute_names(model: Any) -> tuple[str, ...]:
    return tuple(model.names)


def predict_rows(model: Any, rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Predicted T of each row with either kind of model."""
    if isinstance(model, CostModel):
        if not rows:
            return np.empty(0)
        return model.predict_many(np.vstack([model.row(r) for r in rows]))
    return np.asarray(model.predict(rows), dtype=float)


def interval_rows(model: Any, rows: Sequence[Mapping[str, Any]],
                  predicted: Sequence[float] | np.ndarray) -> list[tuple[float, float] | None]:
    """Each row's 90% interval with either kind of model (None where it gives none: a
    family model without one, a cost model whose variance is unknown there)."""
    if isinstance(model, CostModel):
        out: list[tuple[float, float] | None] = []
        for r in rows:
            p = model.predict_interval(r, level=0.90)
            out.append((p.lo, p.hi) if math.isfinite(p.lo) and math.isfinite(p.hi) else None)
        return out
    from nimo.families.interval import family_bounds

    return family_bounds(model, rows, predicted)
