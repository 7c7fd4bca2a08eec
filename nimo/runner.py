"""The runner contract shared by the replay workbench and the live SSH executor.

The planner only ever sees a ``ResourceSpace`` and ``RunOutcome`` objects, so it cannot tell
a replayed run from a live one. ``Runner`` is the contract (structural: the SSH executor
satisfies it without inheriting); ``RunnerBase`` gives a new runner its defaults and
``RunnerWrapper`` forwards every member to an inner runner, for wrappers that change only how
runs are made.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from nimo.records import RunOutcome, RunRequest
from nimo.space import ResourceSpace

OutcomeCallback = Callable[[RunOutcome], None]


@runtime_checkable
class Runner(Protocol):
    """Runs G(I) on assignments of its workbench.

    ``profiles`` is an optional capability: the runner's cache of measured resource
    profiles (``workbench.profiles.ProfileCache``), or None for a runner that measures none.
    Replacing it with an empty cache makes the runner measure profiles again.
    """

    profiles: Any

    @property
    def kind(self) -> str:
        """What a sample holds: ``occupancy`` (o_a, o_n, o_d and D) or ``direct`` (T only);
        the planner learns the matching model."""
        ...

    @property
    def space(self) -> ResourceSpace:
        """The assignments this workbench can realise."""
        ...

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts the runner occupies while it runs (leased by the service)."""
        ...

    def spec(self) -> dict[str, Any]:
        """JSON-able arguments from which the runner registry rebuilds this runner."""
        ...

    @property
    def concurrency(self) -> int:
        """How many runs ``run_many`` runs at once at most (a campaign whose design sets no
        ``batch`` asks for this many training runs at once)."""
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
    """Mixin: ``run_many`` as a loop over ``run``, for runners without parallelism."""

    def run(self, request: RunRequest) -> RunOutcome:
        raise NotImplementedError(f"{type(self).__name__} does not implement run()")

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        outcomes = []
        for request in requests:
            outcome = self.run(request)
            if on_outcome is not None:
                on_outcome(outcome)
            outcomes.append(outcome)
        return outcomes

    def close(self) -> None:
        return None


class RunnerBase(SequentialRunMany, abc.ABC):
    """Defaults of the ``Runner`` contract: runs one at a time (concurrency 1), occupies no
    host, measures no resource profile, samples occupancies. Subclasses give ``space``,
    ``spec`` and ``run``."""

    profiles: Any = None

    @property
    def kind(self) -> str:
        return "occupancy"

    @property
    @abc.abstractmethod
    def space(self) -> ResourceSpace:
        """The assignments this workbench can realise."""

    @property
    def hosts(self) -> tuple[str, ...]:
        return ()

    @property
    def concurrency(self) -> int:
        return 1

    @abc.abstractmethod
    def spec(self) -> dict[str, Any]:
        """JSON-able arguments from which the runner registry rebuilds this runner."""

    @abc.abstractmethod
    def run(self, request: RunRequest) -> RunOutcome:
        """Run once; never raises for a failed run."""


class RunnerWrapper:
    """Forwards the ``Runner`` contract to ``inner``; subclasses change ``run``/``run_many``."""

    def __init__(self, inner: Runner) -> None:
        self.inner = inner

    @property
    def kind(self) -> str:
        return self.inner.kind

    @property
    def space(self) -> ResourceSpace:
        return self.inner.space

    @property
    def hosts(self) -> tuple[str, ...]:
        return self.inner.hosts

    @property
    def concurrency(self) -> int:
        return self.inner.concurrency

    @property
    def profiles(self) -> Any:
        return self.inner.profiles

    @profiles.setter
    def profiles(self, cache: Any) -> None:
        self.inner.profiles = cache

    def spec(self) -> dict[str, Any]:
        return self.inner.spec()

    def run(self, request: RunRequest) -> RunOutcome:
        return self.inner.run(request)

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        return self.inner.run_many(requests, on_outcome)

    def close(self) -> None:
        self.inner.close()


def innermost(runner: Runner) -> Runner:
    """The runner inside every ``RunnerWrapper`` around ``runner`` (itself if none)."""
    while isinstance(runner, RunnerWrapper):
        runner = runner.inner
    return runner
