"""The runs a planner has issued and been told about: numbering, outcomes, learning time."""

from __future__ import annotations

from collections.abc import Sequence

from nimo.errors import ConfigError
from nimo.records import RunOutcome, RunRequest, Sample
from nimo.space import Assignment, ResourceSpace


class RunLedger:
    """Numbers requests, keeps those still out, and charges learning time per outcome
    (a sample's charged seconds, or a failed run's wall time)."""

    def __init__(self, space: ResourceSpace) -> None:
        self.space = space
        self.next_run = 1
        self.pending: dict[int, RunRequest] = {}
        self.told = 0
        self.failures = 0
        self.acquisition_s = 0.0
        self.measured: set[Assignment] = set()
        self.failed: set[Assignment] = set()

    def issue(self, a: Assignment, purpose: str, predictor: str | None = None) -> RunRequest:
        req = RunRequest(self.next_run, self.space.as_dict(a), purpose, predictor)
        self.next_run += 1
        self.pending[req.run] = req
        return req

    def accept(self, outcome: RunOutcome) -> tuple[RunRequest, Assignment, Sample | None]:
        """The request ``outcome`` answers, its assignment and its sample (None if failed)."""
        req = self.pending.pop(outcome.request.run, None)
        if req is None:
            raise ConfigError(f"run {outcome.request.run} was not issued by this planner "
                              "(or was told twice)")
        a = self.space.from_dict(req.assignment)
        self.told += 1
        if outcome.ok:
            assert outcome.sample is not None
            self.measured.add(a)
            self.acquisition_s += outcome.sample.charged_s
            return req, a, outcome.sample
        self.failed.add(a)
        self.failures += 1
        if outcome.started_at is not None and outcome.ended_at is not None:
            self.acquisition_s += max(0.0, outcome.ended_at - outcome.started_at)
        return req, a, None

    def unmeasured(self, exclude: Sequence[Assignment] = ()) -> list[Assignment]:
        """Candidates neither measured, failed nor in ``exclude``, in candidate order."""
        skip = self.measured | self.failed | set(exclude)
        return [c for c in self.space.candidates if c not in skip]
