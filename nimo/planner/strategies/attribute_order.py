"""Attribute order (Table 1): per predictor, the order in which attributes join it.

``pbdf`` ranks attributes by their effect in the Plackett-Burman runs, ``ofat`` by
one-factor-at-a-time screening (and starts each predictor with the attributes that visibly
move its target), and a mapping predictor -> list fixes it. When an attribute joins is the
loop's business (the threshold rule of :mod:`nimo.planner.walk`). To add one: subclass
``AttributeOrder`` and add it to ``ATTRIBUTE_ORDERS`` under its name.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from nimo.errors import ConfigError
from nimo.planner.relevance import ofat_attribute_order, rank_attributes
from nimo.planner.strategies.registry import named_or_spelled_out
from nimo.planner.targets import TARGET_OF
from nimo.planner.walk import AttributeWalk
from nimo.records import Sample
from nimo.space import ResourceSpace

OFAT_SHARE = 0.05  # an attribute starts a predictor if its effect is >= 5% of the largest
OFAT_FLOOR = 0.01  # ... and >= 1% of the target at the reference


def space_order(space: ResourceSpace, predictors: Sequence[str]) -> dict[str, list[str]]:
    """Every predictor's order is the space's attribute order."""
    return {p: list(space.names) for p in predictors}


class AttributeOrder(abc.ABC):
    """Initial orders, revised once the runs it ``needs`` ('pbdf', 'ofat') are in."""

    needs: ClassVar[frozenset[str]] = frozenset()

    @abc.abstractmethod
    def initial(self, space: ResourceSpace, predictors: Sequence[str]) -> dict[str, list[str]]:
        """Each predictor's order before any run."""

    def after_pbdf(self, space: ResourceSpace, samples: Sequence[Sample], walk: AttributeWalk
                   ) -> None:
        """Revise ``walk.orders`` from the PBDF runs."""
        return None

    def after_screen(self, space: ResourceSpace, reference: Sample, probes: dict[str, Sample],
                     walk: AttributeWalk, active: dict[str, list[str]]) -> None:
        """Revise ``walk.orders`` (and the ``active`` attributes) from the screening runs."""
        return None


class PbdfAttributeOrder(AttributeOrder):
    """By the attributes' effects on each predictor's target in the PBDF runs."""

    needs = frozenset({"pbdf"})

    def initial(self, space: ResourceSpace, predictors: Sequence[str]) -> dict[str, list[str]]:
        return space_order(space, predictors)

    def after_pbdf(self, space: ResourceSpace, samples: Sequence[Sample], walk: AttributeWalk
                   ) -> None:
        for p in walk.orders:
            walk.orders[p] = rank_attributes(space, samples, TARGET_OF[p])


class OfatAttributeOrder(AttributeOrder):
    """By the screening effects; attributes that visibly move a predictor's target start it
    (screening already measured each one's main effect)."""

    needs = frozenset({"ofat"})

    def initial(self, space: ResourceSpace, predictors: Sequence[str]) -> dict[str, list[str]]:
        return space_order(space, predictors)

    def after_screen(self, space: ResourceSpace, reference: Sample, probes: dict[str, Sample],
                     walk: AttributeWalk, active: dict[str, list[str]]) -> None:
        for p in walk.orders:
            target = TARGET_OF[p]
            order, effects = ofat_attribute_order(space, reference, probes, target)
            walk.orders[p] = order
            top = max(effects.values(), default=0.0)
            for a in order:
                if top > 0 and effects[a] >= max(OFAT_SHARE * top,
                                                 OFAT_FLOOR * abs(reference.target(target))):
                    active[p].append(a)
            if active[p]:
                walk.start_at(p, active[p][0])


class StaticAttributeOrder(AttributeOrder):
    """The design's lists first, then the attributes each leaves out."""

    def __init__(self, given: Mapping[str, Sequence[str]]) -> None:
        self.given = given

    def initial(self, space: ResourceSpace, predictors: Sequence[str]) -> dict[str, list[str]]:
        names = list(space.names)
        out = space_order(space, predictors)
        for p, attrs in self.given.items():
            for a in attrs:
                if a not in names:
                    raise ConfigError(f"attribute_order.{p}: unknown attribute {a!r}",
                                      hint="valid: " + ", ".join(names))
            if p in out:
                out[p] = list(attrs) + [a for a in names if a not in attrs]
        return out


ATTRIBUTE_ORDERS: dict[str, type[AttributeOrder]] = {
    "pbdf": PbdfAttributeOrder,
    "ofat": OfatAttributeOrder,
}


def attribute_order_for(value: Any) -> AttributeOrder:
    """The strategy for a design's ``attribute_order`` (a registered name or a mapping)."""
    return named_or_spelled_out(ATTRIBUTE_ORDERS, "attribute_order", value, StaticAttributeOrder)

