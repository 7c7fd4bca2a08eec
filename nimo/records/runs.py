"""Run requests and outcomes: what the planner asks a runner for and what comes back, with
the purposes a run serves and the lifecycle it goes through."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from nimo.errors import StoreError
from nimo.records.samples import Sample

INTERRUPTED_REASON = "interrupted"


class RunPurpose(enum.StrEnum):
    """Why the planner asks for a run; it never changes once the run is asked for.

    ``pbdf`` (a screening run of the Plackett-Burman design), ``reference`` (the reference
    assignment), ``test`` (the internal test set), ``train`` (a training sample),
    ``external`` (a benchmark's external test run), ``holdout`` (after learning: accuracy on
    assignments the campaign never used), ``recheck`` (after the holdout: the reference
    assignment once more, to tell hosts that drifted from a model that is off).
    """

    PBDF = "pbdf"
    REFERENCE = "reference"
    TEST = "test"
    TRAIN = "train"
    EXTERNAL = "external"
    HOLDOUT = "holdout"
    RECHECK = "recheck"


@dataclass(frozen=True)
class RunRequest:
    """What the planner asks a runner to do: run G(I) once on ``assignment``.

    ``run`` numbers requests 1, 2, ... in the order the planner issues them; a deterministic
    planner issues the same sequence again when told the same outcomes, which is what
    resuming a campaign relies on. ``purpose`` is a ``RunPurpose`` (given as its text).
    """

    run: int
    assignment: Mapping[str, float]
    purpose: str
    predictor: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "purpose", RunPurpose(self.purpose))


class RunStatus(enum.StrEnum):
    """Lifecycle of one run::

        queued ──> done
           │  └──> failed ──(reopened: the campaign stopped on a broken workbench)──┐
           └─────> interrupted <──(left in flight by a crash)────────────────────────┘
                      │  └──> done | failed   (recorded straight by a resumed campaign)
                      └─────> queued          (asked for again: one more attempt)

    Runners return ``done`` or ``failed``; both are final, except that a failed run may be
    reopened. An interrupted run is run again by a resumed campaign. ``check`` guards every
    transition. In the store an interrupted run keeps the form it had before this state
    existed: status ``failed`` with a reason starting ``interrupted`` (``stored``,
    ``from_stored``).
    """

    QUEUED = "queued"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    @property
    def finished(self) -> bool:
        """Done or failed: a resumed campaign replays the run instead of running it."""
        return self in (RunStatus.DONE, RunStatus.FAILED)

    @property
    def stored(self) -> str:
        """The status text stored and shown for this state."""
        return RunStatus.FAILED.value if self is RunStatus.INTERRUPTED else self.value

    @classmethod
    def from_stored(cls, text: str, reason: str | None) -> RunStatus:
        """The state a stored status text and reason stand for (see ``stored``)."""
        status = cls(text)
        if status is cls.FAILED and (reason or "").startswith(INTERRUPTED_REASON):
            return cls.INTERRUPTED
        return status

    def can_become(self, new: RunStatus) -> bool:
        return new in _RUN_NEXT[self]

    def check(self, new: RunStatus, run: int) -> None:
        """Raise ``StoreError`` unless run ``run`` may go from this state to ``new``."""
        if self.can_become(new):
            return
        if self.finished:
            raise StoreError(f"run {run} is already {self.value}; it cannot become {new.value}")
        raise StoreError(f"run {run} cannot go from {self.value} to {new.value}")


_RUN_NEXT: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.QUEUED: frozenset({RunStatus.DONE, RunStatus.FAILED, RunStatus.INTERRUPTED}),
    RunStatus.INTERRUPTED: frozenset({RunStatus.QUEUED, RunStatus.DONE, RunStatus.FAILED}),
    RunStatus.FAILED: frozenset({RunStatus.INTERRUPTED}),
    RunStatus.DONE: frozenset(),
}


def interrupted_reason(reason: str | None = None) -> str:
    """The stored reason of an interrupted run: ``interrupted``, or ``interrupted (why it
    failed)`` for a failed run reopened."""
    return f"{INTERRUPTED_REASON} ({reason})" if reason else INTERRUPTED_REASON


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
