"""Runner wrappers that compose: ``ResumingRunner`` answers what a previous life of the
campaign finished, ``RetryingRunner`` runs a failed request again, ``StoppableRunner`` is
stopped from another thread (a service shutting down)."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Mapping, Sequence

from nimo.errors import ConfigError, StoreError
from nimo.records import RunOutcome, RunRequest
from nimo.runner import OutcomeCallback, Runner, RunnerWrapper


class ResumingRunner(RunnerWrapper):
    """Answers requests already finished in a previous life of the campaign; runs the rest.

    ``stored`` maps run numbers to finished outcomes (``Store.outcomes``). A stored run
    whose assignment differs from the request means the planner is not the one that made the
    campaign (design or code changed): that raises ``StoreError`` rather than mixing samples.
    Replayed outcomes are not passed to ``on_outcome`` (they are stored already).
    """

    def __init__(self, stored: Mapping[int, RunOutcome], inner: Runner) -> None:
        super().__init__(inner)
        self.stored = dict(stored)
        self.replayed: list[int] = []

    def _stored(self, request: RunRequest) -> RunOutcome | None:
        done = self.stored.get(request.run)
        if done is None:
            return None
        if _same(done.request.assignment, request.assignment):
            return _as_requested(done, request)
        raise StoreError(
            f"run {request.run}: the stored assignment {dict(done.request.assignment)} differs "
            f"from the planner's {dict(request.assignment)}",
            hint="the campaign's design, seed or code changed since it was started",
        )

    def run(self, request: RunRequest) -> RunOutcome:
        done = self._stored(request)
        if done is not None:
            self.replayed.append(request.run)
            return done
        return self.inner.run(request)

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        answered = {r.run: self._stored(r) for r in requests}
        fresh = [r for r in requests if answered[r.run] is None]
        ran = iter(self.inner.run_many(fresh, on_outcome) if fresh else [])
        out = []
        for r in requests:
            done = answered[r.run]
            if done is not None:
                self.replayed.append(r.run)
                out.append(done)
            else:
                out.append(next(ran))
        return out


def _as_requested(done: RunOutcome, request: RunRequest) -> RunOutcome:
    """The stored outcome under the planner's own request (same values, its key order); a
    sample of a run that moved no data gets the occupancies older versions left out."""
    sample = done.sample
    if sample is not None:
        sample = dataclasses.replace(sample.with_no_data_occupancies(),
                                     assignment=dict(request.assignment))
    return dataclasses.replace(done, request=request, sample=sample)


def _same(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return set(a) == set(b) and all(math.isclose(float(a[k]), float(b[k])) for k in a)


class RetryingRunner(RunnerWrapper):
    """Runs a failed request again, up to ``attempts`` times in all (the retry policy);
    only the last outcome is reported. Interrupted runs are not retried here."""

    def __init__(self, inner: Runner, attempts: int = 2) -> None:
        if attempts < 1:
            raise ConfigError("attempts must be >= 1")
        super().__init__(inner)
        self.attempts = attempts
        self.retried: list[int] = []

    def run(self, request: RunRequest) -> RunOutcome:
        return self._retry(request, self.inner.run(request))

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        def forward_ok(outcome: RunOutcome) -> None:
            if on_outcome is not None and (outcome.ok or self.attempts == 1):
                on_outcome(outcome)

        first = self.inner.run_many(requests, forward_ok)
        out = []
        for request, outcome in zip(requests, first, strict=True):
            if not outcome.ok and self.attempts > 1:
                outcome = self._retry(request, outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
            out.append(outcome)
        return out

    def _retry(self, request: RunRequest, outcome: RunOutcome) -> RunOutcome:
        """``outcome`` of the first try, or that of the last retry it took to succeed."""
        for _ in range(self.attempts - 1):
            if outcome.ok:
                break
            self.retried.append(request.run)
            outcome = self.inner.run(request)
        return outcome


class RunnerStopped(KeyboardInterrupt):
    """A ``StoppableRunner`` was stopped: handled as an interrupt (the campaign is marked
    interrupted, its runs in flight too)."""


class StoppableRunner(RunnerWrapper):
    """Stopped from another thread by :meth:`stop`: no further request is run, the inner
    runner's ``abort()`` (if it has one: the live executor kills and tears down its runs in
    flight) is called, and ``run``/``run_many`` raise ``RunnerStopped``."""

    def __init__(self, inner: Runner) -> None:
        super().__init__(inner)
        self._stopped = threading.Event()

    def stop(self) -> None:
        self._stopped.set()
        abort = getattr(self.inner, "abort", None)
        if callable(abort):
            abort()

    def _check(self) -> None:
        if self._stopped.is_set():
            raise RunnerStopped("the runner was stopped")

    def run(self, request: RunRequest) -> RunOutcome:
        self._check()
        outcome = self.inner.run(request)
        self._check()
        return outcome

    def run_many(
        self, requests: Sequence[RunRequest], on_outcome: OutcomeCallback | None = None
    ) -> list[RunOutcome]:
        self._check()
        outcomes = self.inner.run_many(requests, on_outcome)
        self._check()
        return outcomes
