"""The runner contract shared by the replay workbench and the live SSH executor.

The planner only ever sees a ``ResourceSpace`` and ``RunOutcome`` objects, so it cannot tell
a replayed run from a live one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from nimo.records import RunOutcome, RunRequest
from nimo.space import ResourceSpace

OutcomeCallback = Callable[[RunOutcome], None]


@runtime_checkable
class Runner(Protocol):
    """Runs G(I) on assignments of its workbench."""

    @property
    def space(self) -> ResourceSpace:
        """The assignments this workbench can realise."""
        ...

    def run(self, request: RunRequest) -> RunOutcome:
        """Run once; never raises for a failed run (returns status FAILED with a reason)."""
        ...

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        """Run independent requests, concurrently where the workbench can; outcomes are
        returned in request order and reported through ``on_outcome`` as each finishes."""
        ...

    def close(self) -> None:
        """Release hosts and connections; idempotent."""
        ...


class SequentialRunMany:
    """Mixin: ``run_many`` as a loop over ``run`` for runners without parallelism."""

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        outcomes = []
        for request in requests:
            outcome = self.run(request)  # type: ignore[attr-defined]
            if on_outcome is not None:
                on_outcome(outcome)
            outcomes.append(outcome)
        return outcomes

    def close(self) -> None:
        return None
