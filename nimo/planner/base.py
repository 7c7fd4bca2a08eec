"""The planner speaks ask/tell over plain data (Algorithm 1 lives in ``nimo.planner.active``)."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from nimo.records import IterationRecord, RunOutcome, RunRequest

if TYPE_CHECKING:
    from nimo.model import CostModel


class Planner(abc.ABC):
    """Deterministic given its seed and the outcomes it is told: asking again after telling
    the same outcomes yields the same requests, which is what makes resume exact."""

    stopped_because: str | None = None

    @abc.abstractmethod
    def ask(self) -> list[RunRequest]:
        """Independent runs to do next (they may run concurrently); [] once stopped."""

    @abc.abstractmethod
    def tell(self, outcome: RunOutcome) -> IterationRecord:
        """Learn from one outcome of a request this planner issued."""

    @abc.abstractmethod
    def model(self) -> CostModel | None:
        """The current cost model (None while none can be fitted yet)."""
