"""Predictor order (Table 1): the order in which the traversal meets the predictors.

``pbdf`` ranks them from the Plackett-Burman runs, ``ofat`` from one-factor-at-a-time
screening, and a list (e.g. ``[f_d, f_a, f_n, f_D]``) fixes it. To add one: subclass
``PredictorOrder`` and add it to ``PREDICTOR_ORDERS`` under its name.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

from nimo.planner.relevance import ofat_predictor_order, rank_predictors
from nimo.planner.strategies.registry import named_or_spelled_out
from nimo.records import Sample
from nimo.space import ResourceSpace


class PredictorOrder(abc.ABC):
    """The initial order, revised once the runs it ``needs`` ('pbdf', 'ofat') are in."""

    needs: ClassVar[frozenset[str]] = frozenset()

    @abc.abstractmethod
    def initial(self, predictors: Sequence[str], kind: str) -> list[str]:
        """The order before any run."""

    def after_pbdf(self, space: ResourceSpace, samples: Sequence[Sample], kind: str
                   ) -> list[str] | None:
        """A new order from the PBDF runs, or None to keep the current one."""
        return None

    def after_screen(self, reference: Sample, probes: dict[str, Sample], kind: str
                     ) -> list[str] | None:
        """A new order from the screening runs, or None to keep the current one."""
        return None


class PbdfPredictorOrder(PredictorOrder):
    """By the effect of each predictor's contribution to T in the PBDF runs (Appendix A)."""

    needs = frozenset({"pbdf"})

    def initial(self, predictors: Sequence[str], kind: str) -> list[str]:
        return list(predictors)

    def after_pbdf(self, space: ResourceSpace, samples: Sequence[Sample], kind: str
                   ) -> list[str] | None:
        return rank_predictors(space, samples) if kind == "occupancy" else None


class OfatPredictorOrder(PredictorOrder):
    """By the change of each predictor's contribution to T across the screening probes."""

    needs = frozenset({"ofat"})

    def initial(self, predictors: Sequence[str], kind: str) -> list[str]:
        return list(predictors)

    def after_screen(self, reference: Sample, probes: dict[str, Sample], kind: str
                     ) -> list[str] | None:
        return ofat_predictor_order(reference, probes) if kind == "occupancy" else None


class StaticPredictorOrder(PredictorOrder):
    """The design's list first, then any predictor it leaves out (ignored for f_T alone)."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = tuple(order)

    def initial(self, predictors: Sequence[str], kind: str) -> list[str]:
        if kind == "direct":
            return list(predictors)
        return [p for p in self.order if p in predictors] + [
            p for p in predictors if p not in self.order
        ]


PREDICTOR_ORDERS: dict[str, type[PredictorOrder]] = {
    "pbdf": PbdfPredictorOrder,
    "ofat": OfatPredictorOrder,
}


def predictor_order_for(value: Any) -> PredictorOrder:
    """The strategy for a design's ``predictor_order`` (a registered name or a list)."""
    return named_or_spelled_out(PREDICTOR_ORDERS, "predictor_order", value, StaticPredictorOrder)
