"""Frozen domain objects the store hands out (never sqlmodel rows)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nimo.records import RunOutcome, RunRequest, RunStatus, Sample

KINDS = ("replay", "live")
CAMPAIGN_STATUSES = (
    "queued", "created", "running", "holdout", "interrupted", "done", "failed")
INTERRUPTED = "interrupted"
IN_PROGRESS = ("running", "holdout")  # a process is executing the campaign


@dataclass(frozen=True)
class CampaignInfo:
    """A campaign as stored: what to rebuild its planner and runner from, and where it is."""

    name: str
    kind: str
    status: str
    design: Mapping[str, Any]
    spec: Mapping[str, Any]
    seed: int
    stopped_because: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True)
class StoredRun:
    """One run of a campaign with its lifecycle state and, once done, its sample."""

    run: int
    assignment: Mapping[str, float]
    purpose: str
    predictor: str | None
    status: RunStatus
    reason: str | None = None
    attempts: int = 1
    host: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    overhead_s: float = 0.0
    sample: Sample | None = None

    @property
    def request(self) -> RunRequest:
        return RunRequest(self.run, dict(self.assignment), self.purpose, self.predictor)

    @property
    def interrupted(self) -> bool:
        return self.status is RunStatus.FAILED and (self.reason or "").startswith(INTERRUPTED)

    @property
    def final(self) -> bool:
        """Finished for good: a resumed campaign replays it instead of running it again."""
        return self.status.finished and not self.interrupted

    def outcome(self) -> RunOutcome:
        return RunOutcome(
            request=self.request,
            status=self.status,
            sample=self.sample,
            reason=self.reason,
            overhead_s=self.overhead_s,
            host=self.host,
            started_at=self.started_at,
            ended_at=self.ended_at,
        )


@dataclass(frozen=True)
class ModelVersion:
    """A cost model as it stood after ``run`` (``model`` is ``CostModel.to_dict()``)."""

    version: int
    run: int
    model: Mapping[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


@dataclass(frozen=True)
class Lease:
    """A host held by one campaign (``owner`` names the service instance)."""

    host: str
    campaign: str
    owner: str
    acquired_at: float
    released_at: float | None = None
