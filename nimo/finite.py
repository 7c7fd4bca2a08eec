"""Finite numbers for JSON (which has no NaN or infinity): one conversion each for a value
and for a document. Plain Python, so that commands that only print records stay light."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def finite_or_none(value: object) -> float | None:
    """``value`` as a finite float; None when it is not a number or not finite."""
    if isinstance(value, str | bytes):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def finite_document(value: Any) -> Any:
    """``value`` with every non-finite float (in mappings and sequences, at any depth) as
    None and every mapping key as a string; other values unchanged."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): finite_document(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_document(v) for v in value]
    return value
