"""What a strategy sees of the running planner (``NimoPlanner`` provides it).

Strategies read the space, the seeded random generator, the learner and the sets of
assignments already spoken for; the loop owns them. Strategies keep their own state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from nimo.planner.learner import Learner
    from nimo.records import Sample
    from nimo.space import Assignment, ResourceSpace


class PlanView(Protocol):
    """The planner's state a strategy may read; ``rng`` draws advance the planner's stream."""

    @property
    def space(self) -> ResourceSpace: ...

    @property
    def rng(self) -> np.random.Generator: ...

    @property
    def learner(self) -> Learner: ...

    @property
    def reference(self) -> Assignment: ...

    @property
    def notes(self) -> list[str]:
        """Messages for the campaign log (strategies append)."""

    @property
    def next_run(self) -> int: ...

    @property
    def measured(self) -> set[Assignment]: ...

    @property
    def held_out(self) -> set[Assignment]:
        """The internal test set (never trained on)."""

    @property
    def in_flight(self) -> set[Assignment]:
        """Assignments picked earlier in the batch being asked: treated as placed."""

    @property
    def visited(self) -> dict[str, set[float]]:
        """Per attribute, the levels explored around the reference (sampling adds)."""

    @property
    def finished_attributes(self) -> set[str]:
        """Attributes with no level left to explore."""

    @property
    def pbdf_rows(self) -> list[Assignment]: ...

    @property
    def pbdf_samples(self) -> dict[Assignment, Sample]: ...

    def taken(self) -> set[Assignment]:
        """Assignments measured, failed or held out: never chosen again."""

    def unmeasured(self, exclude: Sequence[Assignment] = ()) -> list[Assignment]: ...

    def candidate_pool(self, exclude: Sequence[Assignment] = (), limit: int = 4000
                       ) -> list[Assignment]: ...

    def use_every_attribute(self) -> None:
        """Let every predictor use every attribute from now on."""
