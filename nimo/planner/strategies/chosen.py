"""The strategies a design chooses, looked up by name in each role's registry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nimo.planner.strategies.attribute_order import AttributeOrder, attribute_order_for
from nimo.planner.strategies.error import ERROR_ESTIMATES, ErrorEstimate
from nimo.planner.strategies.predictor_order import PredictorOrder, predictor_order_for
from nimo.planner.strategies.reference import REFERENCES, ReferenceChoice
from nimo.planner.strategies.registry import lookup
from nimo.planner.strategies.sampling import Sampling
from nimo.planner.strategies.samplings import SAMPLINGS
from nimo.planner.strategies.stop import CommitteeAgreement
from nimo.planner.strategies.traversal import TRAVERSALS, Traversal

if TYPE_CHECKING:
    from nimo.planner.design import DesignSpec


@dataclass
class Strategies:
    """One instance of each role, fresh per planner (strategies keep state)."""

    reference: ReferenceChoice
    predictor_order: PredictorOrder
    attribute_order: AttributeOrder
    traversal: Traversal
    sampling: Sampling
    error: ErrorEstimate
    agreement: CommitteeAgreement

    @property
    def needs(self) -> frozenset[str]:
        """The preliminary runs the choices need: 'pbdf' and/or 'ofat' (screening)."""
        return (self.predictor_order.needs | self.attribute_order.needs
                | self.sampling.needs | self.error.needs)


def strategies_for(design: DesignSpec) -> Strategies:
    """The design's choices; an unknown name raises ConfigError listing the valid ones."""
    return Strategies(
        reference=lookup(REFERENCES, "reference", design.reference)(),
        predictor_order=predictor_order_for(design.predictor_order),
        attribute_order=attribute_order_for(design.attribute_order),
        traversal=lookup(TRAVERSALS, "traversal", design.traversal)(
            design.improvement_threshold_pct),
        sampling=lookup(SAMPLINGS, "sampling", design.sampling)(design.cost_exponent),
        error=lookup(ERROR_ESTIMATES, "error", design.error)(design.test_size),
        agreement=CommitteeAgreement(design.stop.agreement_pct),
    )
