"""Planners: NIMO's Algorithm 1 and the baselines, chosen by a design's ``strategy``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nimo.errors import ConfigError
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
    (T learned directly, for data with no occupancies): what the runner's data records,
    unless the design's ``targets`` says 'direct' (learn T even where occupancies are
    recorded) or demands 'occupancy'."""
    spec = design if isinstance(design, DesignSpec) else parse_design(design)
    if spec.targets == "occupancy" and kind == "direct":
        raise ConfigError(f"design {spec.name}: targets: occupancy needs data with "
                          "occupancies (D, o_a, o_n, o_d); this data records only T (valid "
                          "here: auto, direct)")
    if spec.targets == "direct":
        kind = "direct"
    return PLANNERS[spec.strategy](space, spec, seed, kind)  # type: ignore[call-arg]


__all__ = [
    "PLANNERS", "DesignSpec", "IterationRecord", "NimoPlanner", "Planner", "make_planner",
    "parse_design",
]
