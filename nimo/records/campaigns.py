"""Campaign records: a campaign's kind and lifecycle, the campaign as stored, and its runs."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nimo.errors import ConfigError, StoreError
from nimo.records.runs import RunOutcome, RunPurpose, RunRequest, RunStatus
from nimo.records.samples import Sample

CAMPAIGN_NAME = re.compile(r"[^\W_][\w.+:@-]{0,99}")  # letters of any alphabet


def check_campaign_name(name: str) -> str:
    """``name`` if it can name a campaign (it is a table cell, a command argument and part
    of a resume hint); ``ConfigError`` naming it and the valid form otherwise."""
    if not CAMPAIGN_NAME.fullmatch(name):
        raise ConfigError(f"campaign name {name[:60]!r}{'...' if len(name) > 60 else ''} is "
                          "not valid", hint="valid: 1-100 letters, digits and . _ - + : @, "
                          "starting with a letter or digit")
    return name


class CampaignKind(enum.StrEnum):
    """Where a campaign's runs happen: ``replay`` (answered from recorded measurements) or
    ``live`` (run on an inventory's hosts). The workbench's runner registry has one entry
    per kind."""

    REPLAY = "replay"
    LIVE = "live"


class CampaignStatus(enum.StrEnum):
    """Lifecycle of a campaign::

        created ─────────────────────┐
        queued ──> starting ──> running ──> done ──> holdout ──> done
                                   ├──> failed       (a broken workbench stopped it)
                                   └──> interrupted  (Ctrl-C, a store or runner error)
        done | holdout ──> interrupted   stopped before the model was handed over

        any state ──> running            a campaign is resumed from wherever it stopped
        any state but created, queued
                  ──> queued | failed    the service requeues or gives up on what it started

    The recorder marks the learning done before the holdout runs. Setting the status a
    campaign already has is always allowed; ``check`` guards every other change.
    """

    CREATED = "created"
    QUEUED = "queued"
    STARTING = "starting"
    RUNNING = "running"
    HOLDOUT = "holdout"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    @property
    def in_progress(self) -> bool:
        """A process is executing the campaign (learning or running its holdout)."""
        return self in (CampaignStatus.RUNNING, CampaignStatus.HOLDOUT)

    @property
    def active(self) -> bool:
        """Started by the service and not over: starting or in progress."""
        return self is CampaignStatus.STARTING or self.in_progress

    def can_become(self, new: CampaignStatus) -> bool:
        return new is self or new is CampaignStatus.RUNNING or new in _CAMPAIGN_NEXT[self]

    def check(self, new: CampaignStatus, name: str) -> None:
        """Raise ``StoreError`` unless campaign ``name`` may go from this state to ``new``."""
        if not self.can_become(new):
            raise StoreError(f"campaign {name!r} is {self.value}; it cannot become {new.value}")


_S = CampaignStatus
_REQUEUE = frozenset({_S.QUEUED, _S.FAILED})
_CAMPAIGN_NEXT: dict[CampaignStatus, frozenset[CampaignStatus]] = {
    _S.CREATED: frozenset(),
    _S.QUEUED: frozenset({_S.STARTING}),
    _S.STARTING: _REQUEUE,
    _S.RUNNING: _REQUEUE | {_S.DONE, _S.INTERRUPTED},
    _S.HOLDOUT: _REQUEUE | {_S.DONE, _S.INTERRUPTED},
    _S.DONE: _REQUEUE | {_S.HOLDOUT, _S.INTERRUPTED},
    _S.FAILED: _REQUEUE,
    _S.INTERRUPTED: _REQUEUE,
}


@dataclass(frozen=True)
class CampaignInfo:
    """A campaign as stored: what to rebuild its planner and runner from, and where it is."""

    name: str
    kind: CampaignKind
    status: CampaignStatus
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
    purpose: RunPurpose
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
        return self.status is RunStatus.INTERRUPTED

    @property
    def final(self) -> bool:
        """Finished for good: a resumed campaign replays it instead of running it again."""
        return self.status.finished

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
