"""Every sampling by the name ``designs/*.yaml`` gives it (``sampling:``)."""

from __future__ import annotations

from nimo.planner.strategies.sampling import (
    L2I2,
    LmaxI1,
    LmaxI1ThenUncertainty,
    Sampling,
    SpaceFillingThenUncertainty,
)
from nimo.planner.strategies.support_sampling import (
    RelevantSupportPointsAndEdges,
    SupportLevelsThenVariance,
    SupportPoints,
    SupportPointsAndEdges,
    SupportThenVariance,
)

SAMPLINGS: dict[str, type[Sampling]] = {
    "lmax_i1": LmaxI1,
    "l2_i2": L2I2,
    "lmax_i1+uncertainty": LmaxI1ThenUncertainty,
    "spacefill+uncertainty": SpaceFillingThenUncertainty,
    "support": SupportPoints,
    "support+edges": SupportPointsAndEdges,
    "support+edges+relevance": RelevantSupportPointsAndEdges,
    "support+edges+variance": SupportThenVariance,
    "support+levels+variance": SupportLevelsThenVariance,
}
