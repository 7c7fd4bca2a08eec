"""Planners: NIMO's Algorithm 1 and the baselines, chosen by a design's ``strategy``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nimo.planner.active import NimoPlanner
from nimo.planner.base import Planner
from nimo.planner.baselines import AllSamplesPlanner, RandomPlanner
from nimo.planner.design import DesignSpec, parse_design
from nimo.records import IterationRecord
from nimo.space import ResourceSpace

PLANNERS: dict[str, type[Planner]] = {
    "nimo": NimoPlanner,
    "random": RandomPlanner,
    "all_samples": AllSamplesPlanner,
}


def make_planner(
    space: ResourceSpace,
    design: DesignSpec | Mapping[str, Any] | None,
    seed: int = 0,
    kind: str = "occupancy",
) -> Planner:
    """A planner for ``space``; ``kind`` is 'occupancy' (T = f_D x (f_a+f_n+f_d)) or 'direct'
    (T learned directly, for data with no occupancies)."""
    spec = design if isinstance(design, DesignSpec) else parse_design(design)
    return PLANNERS[spec.strategy](space, spec, seed, kind)  # type: ignore[call-arg]


__all__ = [
    "PLANNERS", "DesignSpec", "IterationRecord", "NimoPlanner", "Planner", "make_planner",
    "parse_design",
]
