"""Run requests and outcomes: what the planner asks a runner for and what comes back."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from nimo.records.samples import Sample

PURPOSES = ("pbdf", "reference", "test", "train", "external", "holdout")


@dataclass(frozen=True)
class RunRequest:
    """What the planner asks a runner to do: run G(I) once on ``assignment``.

    ``run`` numbers requests 1, 2, ... in the order the planner issues them; a deterministic
    planner issues the same sequence again when told the same outcomes, which is what
    resuming a campaign relies on.
    """

    run: int
    assignment: Mapping[str, float]
    purpose: str
    predictor: str | None = None


class RunStatus(enum.Enum):
    """Lifecycle of one run::

        queued -> setting_up -> running -> collecting -> done
              \\________\\___________\\____________\\-> failed (with a reason)
    """

    QUEUED = "queued"
    SETTING_UP = "setting_up"
    RUNNING = "running"
    COLLECTING = "collecting"
    DONE = "done"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (RunStatus.DONE, RunStatus.FAILED)


@dataclass(frozen=True)
class RunOutcome:
    """What a runner returns for a request: a sample, or a failure with its reason."""

    request: RunRequest
    status: RunStatus
    sample: Sample | None = None
    reason: str | None = None
    overhead_s: float = 0.0
    host: str | None = None
    started_at: float | None = None
    ended_at: float | None = None

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.DONE and self.sample is not None
