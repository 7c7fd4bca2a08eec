"""The runs some strategies need before training: PBDF rows and one-factor-at-a-time probes."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from nimo.doe import pbdf_design
from nimo.records import Sample
from nimo.space import Assignment, ResourceSpace


@dataclass
class PbdfRuns:
    """The PBDF rows (snapped to candidates, distinct) and the samples of those that ran."""

    rows: list[Assignment] = field(default_factory=list)
    samples: dict[Assignment, Sample] = field(default_factory=dict)

    def measured(self) -> list[Sample]:
        """The samples in row order."""
        return [self.samples[a] for a in self.rows if a in self.samples]


def pbdf_rows(space: ResourceSpace, notes: list[str]) -> list[Assignment]:
    """Rows of the folded-over Plackett-Burman design at each attribute's extremes, snapped
    to the nearest candidates (a note says when one had to move)."""
    rows: list[Assignment] = []
    for signs in pbdf_design(len(space.names)):
        target = [a.hi if s > 0 else a.lo for a, s in zip(space.attributes, signs, strict=True)]
        snapped = space.nearest(target)
        if snapped != tuple(target):
            notes.append(f"PBDF row {tuple(target)} snapped to {snapped}")
        if snapped not in rows:
            rows.append(snapped)
    return rows


def screen_probes(space: ResourceSpace, reference: Assignment, taken: Set[Assignment]
                  ) -> list[tuple[str, Assignment]]:
    """One-factor-at-a-time screening: each attribute at the level farthest from the
    reference, the others at the reference (k independent runs); attributes whose far
    level no free candidate has are left out."""
    probes: list[tuple[str, Assignment]] = []
    for i, attr in enumerate(space.attributes):
        far = max(attr.levels, key=lambda v: (abs(v - reference[i]), v))
        if far == reference[i]:
            continue
        target = list(reference)
        target[i] = far
        a = space.nearest(target, exclude=taken, priority=[i])
        if a[i] != far or a in [p for _, p in probes]:
            continue
        probes.append((attr.name, a))
    return probes
