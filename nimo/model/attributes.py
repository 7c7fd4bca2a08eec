"""A cost model's attributes as stored: one JSON object per attribute, in column order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def attributes_as_dicts(attributes: Sequence[Any]) -> list[dict[str, Any]]:
    """:func:`attribute_doc` of each ``nimo.space.Attribute``."""
    return [attribute_doc({"name": a.name, "levels": a.levels, "direction": a.direction,
                           "resource": a.resource, "unit": a.unit, "load": a.load,
                           "categories": a.categories}) for a in attributes]


def attribute_doc(a: Mapping[str, Any]) -> dict[str, Any]:
    """``{name, levels, direction, resource, unit}``, with ``load`` and ``unmeasured`` when
    true and a categorical attribute's ``categories`` (level k = ``categories[k - 1]``)."""
    return {"name": str(a["name"]), "levels": [float(v) for v in a.get("levels", ())],
            "direction": int(a.get("direction", 1)), "resource": str(a.get("resource", "")),
            "unit": str(a.get("unit", "")), **{k: True for k in ("load", "unmeasured") if a.get(k)},
            **({"categories": [str(c) for c in a["categories"]]} if a.get("categories") else {})}
