"""Predictor traversal (Table 1): which predictor the next training run improves.

To add one: subclass ``Traversal``, implement ``choose`` (and the hooks it needs), and add it
to ``TRAVERSALS`` under the name designs use for ``traversal:``.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence


class Traversal(abc.ABC):
    """Picks a predictor from the current order; told how each training run went."""

    def __init__(self, improvement_threshold_pct: float = 0.0) -> None:
        self.improvement_threshold_pct = improvement_threshold_pct

    @abc.abstractmethod
    def choose(self, order: Sequence[str], errors: Mapping[str, float | None]) -> str:
        """The predictor to improve next; ``errors`` are each one's internal error (%)."""

    def after_run(self, before: float | None, after: float | None, runs_on_attribute: int
                  ) -> None:
        """A training run for the chosen predictor changed its error from before to after."""
        return None

    def skip(self) -> None:
        """The chosen predictor had nothing left to explore."""
        return None


class _InTurn(Traversal):
    """Stays on the predictor at ``position`` in the order; subclasses say when to move."""

    def __init__(self, improvement_threshold_pct: float = 0.0) -> None:
        super().__init__(improvement_threshold_pct)
        self.position = 0

    def choose(self, order: Sequence[str], errors: Mapping[str, float | None]) -> str:
        return order[self.position % len(order)]


class RoundRobin(_InTurn):
    """Each predictor in turn, one run each (the paper's default)."""

    def after_run(self, before: float | None, after: float | None, runs_on_attribute: int
                  ) -> None:
        self.position += 1

    def skip(self) -> None:
        self.position += 1


class ImprovementBased(_InTurn):
    """Stay on a predictor while each run improves it by at least the threshold."""

    def after_run(self, before: float | None, after: float | None, runs_on_attribute: int
                  ) -> None:
        gain = (before - after) if before is not None and after is not None else None
        if gain is not None and gain < self.improvement_threshold_pct and runs_on_attribute >= 2:
            self.position += 1


class Dynamic(Traversal):
    """Algorithm 4: the predictor with the largest current error (ties: earlier in order)."""

    def choose(self, order: Sequence[str], errors: Mapping[str, float | None]) -> str:
        errs = {p: (errors.get(p) or 0.0) for p in order}
        return max(order, key=lambda p: (errs[p], -order.index(p)))


TRAVERSALS: dict[str, type[Traversal]] = {
    "round_robin": RoundRobin,
    "improvement": ImprovementBased,
    "dynamic": Dynamic,
}
