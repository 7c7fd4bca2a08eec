"""Resource space: named attributes with ordered levels, and the workbench's candidates.

An *assignment* is a tuple of attribute values in the space's attribute order. Real
workbenches and datasets are irregular, so the candidates are either the full grid of levels
or an explicit list; planners snap wished-for assignments to the nearest candidate.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nimo.errors import ConfigError, PlanExhausted

RESOURCES = ("compute", "network", "storage")
Assignment = tuple[float, ...]


@dataclass(frozen=True)
class Attribute:
    """One resource-profile attribute.

    ``direction`` is +1 when a larger value means more capacity (CPU speed, memory,
    bandwidth) and -1 when it means less (latency). ``load`` marks a load attribute (input
    size, iterations, a job parameter: more = more work), whose direction is -1.
    ``categories`` names the levels of a categorical attribute (an algorithm variant, an
    instance family): level k means ``categories[k - 1]``, the codes 1..k in sorted order.
    """

    name: str
    levels: tuple[float, ...]
    direction: int = 1
    resource: str = "compute"
    unit: str = ""
    load: bool = False
    categories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.load and self.direction != -1:
            raise ConfigError(f"attribute {self.name!r}: a load attribute has direction -1")
        if not self.levels:
            raise ConfigError(f"attribute {self.name!r} has no levels")
        levels = tuple(sorted({float(v) for v in self.levels}))
        object.__setattr__(self, "levels", levels)
        if self.direction not in (1, -1):
            raise ConfigError(f"attribute {self.name!r}: direction must be 1 or -1")
        if self.categories and levels != tuple(range(1, len(self.categories) + 1)):
            raise ConfigError(f"attribute {self.name!r}: a categorical attribute's levels are "
                              f"1..{len(self.categories)}")
        if self.resource not in RESOURCES:
            raise ConfigError(
                f"attribute {self.name!r}: unknown resource {self.resource!r}",
                hint="valid: " + ", ".join(RESOURCES),
            )

    def category(self, level: float) -> str | float:
        """The category a level stands for (the level itself when not categorical)."""
        return self.categories[int(round(level)) - 1] if self.categories else float(level)

    @property
    def lo(self) -> float:
        return self.levels[0]

    @property
    def hi(self) -> float:
        return self.levels[-1]

    @property
    def low_capacity(self) -> float:
        """The level giving the least capacity (slowest CPU, highest latency...)."""
        return self.lo if self.direction > 0 else self.hi

    @property
    def high_capacity(self) -> float:
        return self.hi if self.direction > 0 else self.lo


@dataclass(frozen=True)
class ResourceSpace:
    """Attributes plus the assignments the workbench can actually realise."""

    attributes: tuple[Attribute, ...]
    candidates: tuple[Assignment, ...] = field(default=())
    _scaled: np.ndarray = field(init=False, repr=False, compare=False)  # for nearest()

    def __post_init__(self) -> None:
        names = [a.name for a in self.attributes]
        if len(set(names)) != len(names):
            raise ConfigError(f"duplicate attribute names in {names}")
        if not self.candidates:
            grid = itertools.product(*(a.levels for a in self.attributes))
            object.__setattr__(self, "candidates", tuple(tuple(p) for p in grid))
        else:
            cands = tuple(dict.fromkeys(tuple(float(v) for v in c) for c in self.candidates))
            for c in cands:
                if len(c) != len(self.attributes):
                    raise ConfigError(f"candidate {c} does not have {len(names)} values")
            object.__setattr__(self, "candidates", cands)
        object.__setattr__(self, "_scaled", self._scale(np.asarray(self.candidates, float)))

    # -- names and conversion -------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ConfigError(
                f"unknown attribute {name!r}", hint="valid: " + ", ".join(self.names)
            ) from None

    def attribute(self, name: str) -> Attribute:
        return self.attributes[self.index(name)]

    @property
    def categories(self) -> dict[str, tuple[str, ...]]:
        """Each categorical attribute's categories (level k = ``categories[k - 1]``)."""
        return {a.name: a.categories for a in self.attributes if a.categories}

    def named(self, d: Mapping[str, float]) -> dict[str, str | float]:
        """An assignment with each categorical attribute's level as its category name."""
        by_name = {a.name: a for a in self.attributes}
        return {n: by_name[n].category(v) if n in by_name else v for n, v in d.items()}

    def as_dict(self, a: Assignment) -> dict[str, float]:
        return dict(zip(self.names, a, strict=True))

    def from_dict(self, d: Mapping[str, float]) -> Assignment:
        missing = [n for n in self.names if n not in d]
        if missing:
            raise ConfigError(f"assignment lacks {', '.join(missing)}")
        return tuple(float(d[n]) for n in self.names)

    def with_load(self, names: Sequence[str], key: str = "load") -> ResourceSpace:
        """This space with ``names`` marked as load attributes (direction -1); ConfigError
        naming ``key`` for an unknown name."""
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise ConfigError(f"{key}: unknown attribute {unknown[0]!r}",
                              hint="valid: " + ", ".join(self.names))
        attrs = tuple(dataclasses.replace(a, direction=-1, load=True) if a.name in names
                      else a for a in self.attributes)
        return ResourceSpace(attrs, self.candidates)

    def restricted(self, keep: Iterable[Assignment]) -> ResourceSpace:
        """The same attributes with only the given candidates (e.g. minus a test set)."""
        return ResourceSpace(self.attributes, tuple(keep))

    # -- special assignments ---------------------------------------------------------
    def min_capacity(self) -> Assignment:
        return self.nearest(tuple(a.low_capacity for a in self.attributes))

    def max_capacity(self) -> Assignment:
        return self.nearest(tuple(a.high_capacity for a in self.attributes))

    def random(self, rng: np.random.Generator) -> Assignment:
        return self.candidates[int(rng.integers(len(self.candidates)))]

    # -- snapping --------------------------------------------------------------------
    def _scale(self, x: np.ndarray) -> np.ndarray:
        lo = np.array([a.lo for a in self.attributes])
        span = np.array([(a.hi - a.lo) or 1.0 for a in self.attributes])
        return (np.atleast_2d(x) - lo) / span

    def nearest(
        self,
        target: Sequence[float],
        exclude: Iterable[Assignment] = (),
        priority: Sequence[int] = (),
    ) -> Assignment:
        """The candidate closest to ``target`` (attributes scaled to [0, 1]).

        Attributes listed in ``priority`` weigh 100x more, so the attribute being explored
        keeps its wished-for value when any candidate has it. Candidates in ``exclude``
        are skipped; if all are excluded a ConfigError is raised.
        """
        excluded = set(exclude)
        t = self._scale(np.asarray(target, float))[0]
        w = np.ones(len(self.attributes))
        for i in priority:
            w[i] = 100.0
        d = (((self._scaled - t) ** 2) * w).sum(axis=1)
        for i in np.argsort(d, kind="stable"):
            c = self.candidates[int(i)]
            if c not in excluded:
                return c
        raise PlanExhausted("no candidate assignment left to run")

    def __contains__(self, a: object) -> bool:
        return a in set(self.candidates)
