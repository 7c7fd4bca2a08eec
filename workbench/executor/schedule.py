"""Host scheduling: which compute host runs which request, repeats, and the failure budget.

Each compute host is a lane: it runs one request at a time, lanes run concurrently. A
request is run ``application.repeats`` times (each attempt retried on transient failures by
the runner); the outcome is the median-T repeat.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from nimo.records import RunOutcome, RunRequest
from nimo.runner import OutcomeCallback
from workbench.inventory import Host, Policies

RunOn = Callable[[Host, RunRequest], RunOutcome]


def run_in_lanes(lanes: Sequence[Host], requests: Sequence[RunRequest], run_on: RunOn,
                 on_outcome: OutcomeCallback | None, interrupted: threading.Event,
                 ) -> list[RunOutcome]:
    """Run ``requests`` on the ``lanes`` (one at a time per lane, lanes concurrently).

    Outcomes come back in request order and go to ``on_outcome`` as each finishes. Setting
    ``interrupted`` (the failure budget does) stops handing out new runs: the outcomes of the
    runs made are returned. Ctrl-C, or an error ``run_on`` raises (a fatal setup error), also
    stops handing out runs, lets the running ones finish and tear down, then propagates.
    """
    pending = list(enumerate(requests))
    results: dict[int, RunOutcome] = {}
    lock = threading.Lock()

    def lane(host: Host) -> None:
        while True:
            with lock:
                if not pending or interrupted.is_set():
                    return
                i, request = pending.pop(0)
            try:
                outcome = run_on(host, request)
            except BaseException:
                interrupted.set()
                raise
            with lock:
                results[i] = outcome
                if on_outcome is not None:
                    on_outcome(outcome)

    hosts = lanes[: max(1, len(requests))]
    interrupted.clear()
    pool = ThreadPoolExecutor(max_workers=len(hosts), thread_name_prefix="nimo-run")
    futures = [pool.submit(lane, h) for h in hosts]
    try:
        errors = [e for e in (f.exception() for f in futures) if e is not None]
    except KeyboardInterrupt:
        interrupted.set()  # no new runs; running ones tear down (a 2nd ^C abandons)
        with contextlib.suppress(KeyboardInterrupt):
            for f in futures:
                f.exception()
        raise
    finally:
        pool.shutdown(wait=False)
    if errors:
        raise errors[0]
    return [results[i] for i in range(len(requests)) if i in results]


def median_repeat(repeats: list[RunOutcome]) -> RunOutcome:
    """One outcome for all repeats: the last failure, or the median-T sample charged the
    summed cost (its meta lists every repeat's T)."""
    if len(repeats) == 1:
        return repeats[0]
    cost = sum((o.ended_at or 0.0) - (o.started_at or 0.0) for o in repeats)
    if not repeats[-1].ok:
        bad = repeats[-1]
        return dataclasses.replace(bad, reason=f"repeat {len(repeats)}: {bad.reason}",
                                   started_at=repeats[0].started_at)
    samples = [o.sample for o in repeats if o.sample is not None]
    mid = sorted(repeats, key=lambda o: o.sample.T if o.sample else 0.0)[(len(repeats) - 1) // 2]
    assert mid.sample is not None
    meta = {**mid.sample.meta, "repeats_T": [s.T for s in samples]}
    sample = dataclasses.replace(mid.sample, cost_s=cost, meta=meta)
    return dataclasses.replace(mid, sample=sample, overhead_s=sum(o.overhead_s for o in repeats),
                               started_at=repeats[0].started_at, ended_at=repeats[-1].ended_at)


class FailureBudget:
    """Counts failed runs and says when the inventory's ``policies`` stop the campaign:
    after the first failure with ``on_failure: stop``, or once ``max_failures`` runs have
    failed (the counts are of this process: a resumed campaign starts a fresh budget)."""

    def __init__(self, policies: Policies) -> None:
        self.policies = policies
        self.failures = 0
        self.stopped_because: str | None = None
        self._lock = threading.Lock()

    def record(self, outcome: RunOutcome) -> bool:
        """Count ``outcome`` if it failed; set ``stopped_because`` once a policy says stop.
        Returns whether the campaign must stop."""
        if outcome.ok:
            return self.stopped_because is not None
        with self._lock:
            self.failures += 1
            pol = self.policies
            if pol.on_failure == "stop" and self.stopped_because is None:
                self.stopped_because = (f"stopped after run {outcome.request.run} failed "
                                        "(policies.on_failure: stop)")
            elif (pol.max_failures is not None and self.failures >= pol.max_failures
                  and self.stopped_because is None):
                self.stopped_because = (f"{self.failures} failed runs reached "
                                        f"policies.max_failures={pol.max_failures}")
            return self.stopped_because is not None
