"""Iteration records: one line of a campaign's convergence log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


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
