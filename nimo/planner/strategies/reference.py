"""Reference assignment (Table 1: Min, Max, Rand): where Algorithm 1 starts.

To add one: subclass ``ReferenceChoice``, implement ``choose``, and add it to ``REFERENCES``
under the name designs use for ``reference:``.
"""

from __future__ import annotations

import abc

import numpy as np

from nimo.planner.strategies.scoring import rank_scale
from nimo.space import Assignment, ResourceSpace


class ReferenceChoice(abc.ABC):
    """Chooses the reference assignment once, before any run."""

    @abc.abstractmethod
    def choose(self, space: ResourceSpace, rng: np.random.Generator) -> Assignment:
        """The reference assignment (a candidate of ``space``)."""


class MinReference(ReferenceChoice):
    """The least capacity on every attribute (the paper's default)."""

    def choose(self, space: ResourceSpace, rng: np.random.Generator) -> Assignment:
        return space.min_capacity()


class MaxReference(ReferenceChoice):
    """The most capacity on every attribute."""

    def choose(self, space: ResourceSpace, rng: np.random.Generator) -> Assignment:
        return space.max_capacity()


class RandomReference(ReferenceChoice):
    """A seeded random candidate (one draw from the planner's generator)."""

    def choose(self, space: ResourceSpace, rng: np.random.Generator) -> Assignment:
        return space.random(rng)


class CenterReference(ReferenceChoice):
    """The candidate nearest the middle of the space in rank-scaled coordinates (each
    attribute's median level): the first point of a space-filling design, far from every
    cliff at an edge of the space."""

    def choose(self, space: ResourceSpace, rng: np.random.Generator) -> Assignment:
        scaled = rank_scale(space, np.asarray(space.candidates, float))
        d = ((scaled - 0.5) ** 2).sum(axis=1)
        return space.candidates[int(np.argmin(d))]


REFERENCES: dict[str, type[ReferenceChoice]] = {
    "min": MinReference,
    "max": MaxReference,
    "rand": RandomReference,
    "center": CenterReference,
}
