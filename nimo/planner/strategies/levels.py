"""Levels no run holds yet: every attribute's smallest and largest level and, for a design
that asks, every level a large share of the candidate assignments hold. Cross-validation over
the runs cannot judge a level no run holds, and a coarse attribute's unmeasured level can be a
fifth of the space (tuning suite gen110 seed 1: memory 699 MB never measured in 19 runs; the
model put the cliff, really at 622 MB, above it and was 182% off on that fifth)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nimo.model.support import sampled_candidates
from nimo.space import ResourceSpace

if TYPE_CHECKING:
    from nimo.planner.strategies.view import PlanView

# a level this share of the candidates hold is a region of the space, not a corner of it
LEVEL_WARN_SHARE = 0.10


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


def unmeasured_interior_levels(space: ResourceSpace, rows: np.ndarray,
                               share: float = LEVEL_WARN_SHARE,
                               sample: np.ndarray | None = None) -> dict[str, list[list[float]]]:
    """Per numeric attribute, as [level, share of the candidates] pairs: its levels strictly
    between the lowest and highest value of ``rows`` (the training assignments) that no row
    holds and that at least ``share`` of the candidates hold (estimated on a seeded subset).
    The model interpolates there, and cross-validation over the rows cannot judge how well
    (tuning suite gen225 seed 7: input 9490 MB, a quarter of the candidates, never measured
    in 37 runs; stopped at 4.9% internal error, 126% off on its external test set).
    ``sample``: that subset of the candidates, when the caller has drawn it already."""
    X = np.asarray(rows, float)
    sample = sampled_candidates(space.candidates) if sample is None else sample
    if X.ndim != 2 or not len(X) or not len(sample):
        return {}
    out: dict[str, list[list[float]]] = {}
    for j, attribute in enumerate(space.attributes):
        if attribute.categories:
            continue
        held, lo, hi = set(X[:, j].tolist()), float(X[:, j].min()), float(X[:, j].max())
        # an Attribute's levels are sorted and distinct already
        inside = [v for v in attribute.levels if lo < v < hi and v not in held]
        pairs = [[v, round(float(np.mean(sample[:, j] == v)), 3)] for v in inside]
        pairs = [p for p in pairs if p[1] >= share]
        if pairs:
            out[attribute.name] = pairs
    return out
