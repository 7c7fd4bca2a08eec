"""Host scheduling: which compute host runs which request, repeats, and the failure budget.

Each compute host is a lane: it runs one request at a time, lanes run concurrently; a host
whose run failed for a host reason sits out a while (``executor.rotation``). A request is
run ``application.repeats`` times (each attempt retried on transient failures by
the runner); the outcome is the median-T repeat.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from nimo.records import RunOutcome, RunRequest
from nimo.runner import OutcomeCallback
from workbench.executor.rotation import HostRotation
from workbench.exitstatus import interrupts_deferred
from workbench.inventory import Host, Policies
from workbench.remote.group import wait_in_slices
from workbench.remote.handshakes import abandon_all

# runs one request on one host: its outcome, and whether it failed for a host reason
RunOn = Callable[[Host, RunRequest], tuple[RunOutcome, bool]]


@dataclass
class _Item:
    index: int
    request: RunRequest
    failed_on: set[str] = field(default_factory=set)


class _Lanes:
    """The shared state of :func:`run_in_lanes` (see there)."""

    def __init__(self, lanes: Sequence[Host], requests: Sequence[RunRequest], run_on: RunOn,
                 on_outcome: OutcomeCallback | None, interrupted: threading.Event,
                 rotation: HostRotation) -> None:
        self.names = {h.name for h in lanes}
        self.pending = [_Item(i, r) for i, r in enumerate(requests)]
        self.results: dict[int, RunOutcome] = {}
        self.busy = 0
        self.cond = threading.Condition()
        self.run_on, self.on_outcome = run_on, on_outcome
        self.interrupted, self.rotation = interrupted, rotation

    def _take(self, host: str) -> _Item | None:
        """The next request ``host`` may run (waits while it sits out a backoff), or None
        when nothing is left to run here."""
        with self.cond:
            while not self.interrupted.is_set() and (self.pending or self.busy):
                wait = self.rotation.wait_s(host)
                item = next((it for it in self.pending if host not in it.failed_on), None)
                if wait <= 0 and item is not None:
                    self.pending.remove(item)
                    self.busy += 1
                    return item
                self.cond.wait(min(wait, 1.0) if wait > 0 else 1.0)
            return None

    def lane(self, host: Host) -> None:
        while (item := self._take(host.name)) is not None:
            try:
                outcome, host_fault = self.run_on(host, item.request)
            except BaseException:
                self.interrupted.set()
                with self.cond:
                    self.busy -= 1
                    self.cond.notify_all()
                raise
            with self.cond:
                self.busy -= 1
                self._settle(host.name, item, outcome, host_fault)
                self.cond.notify_all()

    def _settle(self, host: str, item: _Item, outcome: RunOutcome, host_fault: bool) -> None:
        if host_fault:
            spent = (outcome.ended_at or 0.0) - (outcome.started_at or 0.0)
            self.rotation.failed(host, outcome.reason or "", max(0.0, spent))
            item.failed_on.add(host)
            if self.names - item.failed_on:  # another host may run it: not a failed run
                self.pending.insert(0, item)
                return
        elif outcome.ok:
            self.rotation.succeeded(host)
        self.results[item.index] = outcome
        if self.on_outcome is not None:
            self.on_outcome(outcome)


def run_in_lanes(lanes: Sequence[Host], requests: Sequence[RunRequest], run_on: RunOn,
                 on_outcome: OutcomeCallback | None, interrupted: threading.Event,
                 rotation: HostRotation | None = None, abort: threading.Event | None = None,
                 ) -> list[RunOutcome]:
    """Run ``requests`` on the ``lanes`` (one at a time per lane, lanes concurrently).

    Outcomes come back in request order and go to ``on_outcome`` as each finishes. A run
    that failed for a host reason goes back to the queue for another host, and its host
    sits out a backoff (``rotation``); it is a failed run once every host failed it.
    Setting ``interrupted`` (the failure budget does) stops handing out new runs: the
    outcomes of the runs made are returned. Ctrl-C (or SIGTERM/SIGHUP, raised as one) sets
    ``abort`` too, which kills the running G's; their teardown runs, then the interrupt
    propagates. An error ``run_on`` raises (a fatal setup error) also stops handing out
    runs, lets the running ones finish and tear down, then propagates.
    """
    state = _Lanes(lanes, requests, run_on, on_outcome, interrupted,
                   rotation or HostRotation([h.name for h in lanes]))
    interrupted.clear()
    pool = ThreadPoolExecutor(max_workers=max(1, len(lanes)), thread_name_prefix="nimo-run")
    futures = [pool.submit(state.lane, h) for h in lanes]
    try:
        wait_in_slices(futures)
        errors = [e for e in (f.exception() for f in futures) if e is not None]
    except KeyboardInterrupt as e:
        with interrupts_deferred(reraise=False) as noted:  # a second one waits for teardown
            interrupted.set()  # no new runs; running ones are killed and torn down
            if abort is not None:
                abort.set()
            abandon_all()  # a lane connecting to a hung host gives up at once
            with state.cond:
                state.cond.notify_all()
        _wait_for_teardown(futures, e, more=len(noted))
        raise
    finally:
        pool.shutdown(wait=False)
    if errors:
        raise errors[0]
    return [state.results[i] for i in range(len(requests)) if i in state.results]


def _wait_for_teardown(futures: Sequence[Future[None]], interrupt: KeyboardInterrupt,
                       more: int = 0) -> None:
    """Wait for the lanes to kill and tear down their runs. A second interrupt does not stop
    the teardown (a half-torn host keeps qdiscs, rules and monitors); a third abandons the
    wait and marks ``interrupt.hosts_dirty`` (the runs stay in flight: a resume cleans).
    ``more``: interrupts already noted since the first."""
    if more:
        _say_tearing_down()
    while more < 2:
        try:
            wait_in_slices(futures)
            return
        except KeyboardInterrupt:
            more += 1
            if more < 2:
                _say_tearing_down()
    interrupt.hosts_dirty = True  # type: ignore[attr-defined]


def _say_tearing_down() -> None:
    print("nimo: tearing down the runs in flight; interrupt once more to abandon "
          "them (a resume cleans their hosts)", file=sys.stderr, flush=True)


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
