"""Levels no run holds yet: every attribute's smallest and largest level and, for a design
that asks, every level a large share of the candidate assignments hold. Cross-validation over
the runs cannot judge a level no run holds, and a coarse attribute's unmeasured level can be a
fifth of the space (tuning suite gen110 seed 1: memory 699 MB never measured in 19 runs; the
model put the cliff, really at 622 MB, above it and was 182% off on that fifth)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nimo.space import ResourceSpace

if TYPE_CHECKING:
    from nimo.planner.strategies.view import PlanView


def common_levels(space: ResourceSpace, share: float) -> list[set[float]]:
    """Per attribute, its levels held by at least ``share`` of the candidate assignments."""
    n = len(space.candidates)
    out = []
    for j in range(len(space.attributes)):
        counts = Counter(c[j] for c in space.candidates)
        out.append({float(v) for v, k in counts.items() if k >= share * n})
    return out


def unmeasured_levels(view: PlanView, wanted: Sequence[set[float]] = ()
                      ) -> dict[int, set[float]]:
    """Per attribute index, its smallest and largest level and its ``wanted`` levels that no
    measured, failed or picked assignment holds (a level whose run failed is not tried again
    and again)."""
    seen = (view.taken() - view.held_out) | view.measured | view.in_flight
    out: dict[int, set[float]] = {}
    for i, attribute in enumerate(view.space.attributes):
        levels = {min(attribute.levels), max(attribute.levels)} | (
            set(wanted[i]) if wanted else set())
        levels -= {a[i] for a in seen}
        if levels:
            out[i] = levels
    return out
