"""The planner speaks ask/tell over plain data (Algorithm 1 lives in ``nimo.planner.active``)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field

from nimo.samples import RunOutcome, RunRequest


@dataclass(frozen=True)
class IterationRecord:
    """One line of the convergence log: what a told outcome did to the planner's state."""

    run: int
    assignment: Mapping[str, float]
    purpose: str
    predictor: str | None
    attributes: Mapping[str, tuple[str, ...]]
    acquisition_s: float
    internal_error_pct: float | None
    status: str = "done"
    reason: str | None = None
    external_mape_pct: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "run": self.run,
            "assignment": dict(self.assignment),
            "purpose": self.purpose,
            "predictor": self.predictor,
            "attributes": {k: list(v) for k, v in self.attributes.items()},
            "acquisition_s": self.acquisition_s,
            "internal_error_pct": self.internal_error_pct,
            "external_mape_pct": self.external_mape_pct,
            "status": self.status,
            "reason": self.reason,
            **dict(self.extra),
        }


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
    def model(self):  # -> nimo.model.CostModel
        """The current cost model."""
