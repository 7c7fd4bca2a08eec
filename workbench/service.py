"""The campaign service behind ``nimo serve``: APScheduler 3, its jobs in this process
(the persistent queue is the store's queued campaigns: a job in a job store shared by several
services would run in each of them).

* The service is one owner in the store (``workbench.ownership.Presence``: host, pid,
  heartbeat); instances on other machines sharing the store see it alive by its heartbeat.
* ``dispatch`` (every ``poll_s``) starts queued campaigns it can claim (one owner per
  campaign, service or CLI) and whose hosts (except ``shareable`` ones) are all free: the
  hosts are leased in the store in one transaction (a host is never used by two campaigns at
  once), then a one-off job runs the campaign (``workbench.campaigns.resume``: a fresh
  campaign is a resume with nothing stored).
* Failed runs are retried by policy (``RetryingRunner``); a campaign that raises is queued
  again up to ``campaign_attempts`` times, then marked failed with the reason (a user error
  or the failure policy at once).
* Every ``remeasure_s``, running live campaigns drop their cached resource profiles, so
  profiles are measured again at the next runs.
* At every dispatch, submitted campaigns left starting/running by a dead owner (its
  heartbeat stale, on any machine) are claimed and queued again; resuming them repeats no
  finished run.
* ``shutdown`` (Ctrl-C, SIGTERM, SIGHUP) lets each campaign finish its runs in flight, then
  queues it again for the next service.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from nimo.campaign import RetryingRunner
from nimo.campaign.runners import StoppableRunner
from nimo.errors import (
    ConfigError,
    DataError,
    FileAccessError,
    NimoError,
    interrupt_reason,
)
from nimo.records import CampaignInfo, CampaignStatus, RunOutcome, RunRequest
from nimo.runner import OutcomeCallback, Runner, RunnerWrapper
from nimo.store import open_store
from nimo.store.urls import refuse_in_memory
from workbench.ownership import Busy, Presence
from workbench.remote.handshakes import abandon_all

log = logging.getLogger("nimo.serve")
RunnerFactory = Callable[[CampaignInfo], Runner]
ACTIVE = tuple(s for s in CampaignStatus if s.active)
_SERVICE: Service | None = None


def dispatch_job() -> None:
    """Scheduler entry point (the service of this process dispatches)."""
    if _SERVICE is not None:
        _SERVICE.dispatch()


def run_campaign_job(name: str) -> None:
    if _SERVICE is not None:
        _SERVICE.run_campaign(name)


def remeasure_job() -> None:
    if _SERVICE is not None:
        _SERVICE.remeasure_profiles()


class Service:
    """One scheduler per store; see the module docstring."""

    def __init__(
        self,
        store_url: str | None = None,
        *,
        poll_s: float = 2.0,
        workers: int = 4,
        run_attempts: int = 2,
        campaign_attempts: int = 2,
        remeasure_s: float | None = None,
        runner_factory: RunnerFactory | None = None,
    ) -> None:
        refuse_in_memory(store_url)  # queued campaigns come from other processes
        self.store = open_store(store_url)
        self.store_url = store_url
        self.presence = Presence(self.store)
        self.owner = self.presence.id
        self._stopping = threading.Event()
        self._mine: set[str] = set()  # campaigns this instance dispatched and still runs
        self._next_full = 0.0  # monotonic time of the next dispatch that also recovers
        self.poll_s = poll_s
        self.workers = workers
        self.run_attempts = run_attempts
        self.campaign_attempts = campaign_attempts
        self.remeasure_s = remeasure_s
        self.runner_factory = runner_factory
        self.scheduler: Any = None
        self._lock = threading.Lock()
        self._runners: dict[str, Runner] = {}
        self.failed: dict[str, str] = {}  # campaigns this instance marked failed: reason

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.jobstores.memory import MemoryJobStore

        global _SERVICE
        _SERVICE = self
        self.presence.__enter__()
        self.recover()
        self.scheduler = _scheduler_class()(
            jobstores={"default": MemoryJobStore()},
            executors={"default": ThreadPoolExecutor(self.workers + 2)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )
        self.scheduler.add_job(dispatch_job, "interval", seconds=self.poll_s, id="nimo-dispatch",
                               replace_existing=True, next_run_time=_now())
        if self.remeasure_s:
            self.scheduler.add_job(remeasure_job, "interval", seconds=self.remeasure_s,
                                   id="nimo-remeasure", replace_existing=True)
        self.scheduler.start()
        log.info("serving %s as %s", self.store.url, self.owner)

    def shutdown(self, wait: bool = True) -> None:
        """Stop: no campaign starts a new run; the runs in flight are killed and torn down
        (as Ctrl-C does), and their campaigns queued again for the next service; then the
        scheduler ends (waiting for them) and the service's claims and leases are released."""
        global _SERVICE
        self._stopping.set()
        with self._lock:
            running = list(self._runners.values())
        for runner in running:
            if isinstance(runner, StoppableRunner):
                runner.stop()
        abandon_all()  # a run connecting to a hung host is stopped too, not after 3 x 10 s
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.pause()  # no job lookup starts from here (see _scheduler_class)
            with self.scheduler._jobstores_lock:
                pass  # and the one under way, if any, has submitted its jobs
            self.scheduler.shutdown(wait=wait)
        if _SERVICE is self:
            _SERVICE = None
        self.presence.__exit__(None, None, None)
        self.store.close()

    def idle(self) -> bool:
        """No campaign queued, starting or running."""
        return not any(c.status is CampaignStatus.QUEUED or c.status.active
                       for c in self._submitted())

    def _submitted(self) -> list[CampaignInfo]:
        return [c for c in self.store.campaigns() if c.spec.get("submitted")]

    # -- jobs ------------------------------------------------------------------------
    def recover(self) -> None:
        """Queue again submitted campaigns left starting/running by a dead owner (heartbeat
        stale, on any machine): claiming one succeeds only then."""
        for info in self._submitted():
            if not info.status.active or info.name in self._mine:
                continue
            try:
                self.presence.claim(info.name)
            except Busy:
                continue  # a live owner runs it
            try:
                if self.store.set_status(info.name, CampaignStatus.QUEUED, expect=ACTIVE):
                    log.info("requeued %s (left %s by a stopped owner)", info.name, info.status)
            finally:
                self.presence.release(info.name)

    def dispatch(self) -> None:
        """Start every queued campaign this service can claim and whose hosts can all be
        leased now."""
        from workbench.campaigns import leased_hosts

        if self._stopping.is_set():
            return
        with self._lock:
            full = time.monotonic() >= self._next_full
            if full:  # a full pass writes (claims reap the dead): not at every poll
                self._next_full = time.monotonic() + max(self.poll_s, self.presence.stale_s / 5)
                self.recover()
            held = {lease.host for lease in self.store.leases()}
            for info in self.store.campaigns(status=CampaignStatus.QUEUED):
                if not full and held & set(leased_hosts(info)):
                    continue  # taken now; a full pass reaps the leases of dead owners
                try:
                    self.presence.claim(info.name)
                    self.presence.lease(info.name, leased_hosts(info))
                except Busy:
                    self.presence.release(info.name)
                    continue
                if not self.store.set_status(info.name, CampaignStatus.STARTING,
                                             expect=[CampaignStatus.QUEUED]):
                    self.presence.release(info.name)
                    continue
                self._mine.add(info.name)
                log.info("starting %s on %s", info.name,
                         ", ".join(info.spec.get("hosts") or ()) or "no hosts")
                self.scheduler.add_job(run_campaign_job, "date", run_date=_now(),
                                       args=[info.name], id=f"nimo-campaign:{info.name}",
                                       replace_existing=True)

    def run_campaign(self, name: str) -> None:
        from workbench.campaigns import resume
        from workbench.runners import open_runner_for

        owner = self.store.campaign_owner(name)
        if owner is None or owner.id != self.owner or not self.store.set_status(
                name, CampaignStatus.RUNNING, expect=[CampaignStatus.STARTING]):
            return  # a job a previous instance left: dispatch claims and starts it anew
        base = self.runner_factory or open_runner_for

        def factory(info: CampaignInfo) -> Runner:
            runner = StoppableRunner(base(info))
            with self._lock:
                self._runners[name] = runner
            return _Stoppable(RetryingRunner(runner, self.run_attempts), self._stopping)

        try:
            result = resume(name, store_url=self.store_url, progress=False,
                            runner_factory=factory, presence=self.presence)
            log.info("%s done: %s, %d runs", name, result.stopped_because, len(result.iterations))
        except ServiceStopping:  # refused before running: the runs it queued never started
            self.store.interrupt_in_flight(name)
            self.store.set_status(name, CampaignStatus.QUEUED, stopped_because="service stopped")
            log.info("%s queued again: the service is stopping", name)
        except Exception as e:  # one line in the store; the service keeps serving
            self._failed(name, e)
        except KeyboardInterrupt as e:  # the service is stopping: the next one resumes it
            self.store.set_status(name, CampaignStatus.QUEUED,
                                  stopped_because=f"service stopped ({interrupt_reason(e)})")
            log.info("%s interrupted and queued again: the service is stopping", name)
        finally:
            with self._lock:
                self._runners.pop(name, None)
                self._mine.discard(name)
                self.presence.release(name)

    def _failed(self, name: str, error: Exception) -> None:
        """Queue the campaign again once, or mark it failed; a user error (bad data, design or
        file) or the failure policy (``CampaignStopped``) fails it at once: a retry would
        fail alike."""
        from workbench.executor.stops import CampaignStopped

        info = self.store.campaign(name)
        attempts = int(info.spec.get("service_attempts") or 0) + 1
        self.store.update_spec(name, service_attempts=attempts)
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        final = isinstance(error, CampaignStopped | ConfigError | DataError | FileAccessError)
        if attempts < self.campaign_attempts and not final:  # a user error would fail alike
            self.store.set_status(name, CampaignStatus.QUEUED, stopped_because=reason)
            log.warning("%s failed (%s); queued again (attempt %d)", name, reason, attempts + 1)
        else:
            self.store.set_status(name, CampaignStatus.FAILED, stopped_because=reason)
            self.failed[name] = reason
            log.error("%s failed: %s", name, reason)
        if not isinstance(error, NimoError):
            log.debug("traceback", exc_info=error)

    def remeasure_profiles(self) -> None:
        """Make running live campaigns re-measure resource profiles (Section 2.5): their
        runners' profile caches are emptied, so each setting is measured again at its next
        run instead of reusing a measurement that may have gone stale."""
        with self._lock:
            runners = dict(self._runners)
        for name, runner in runners.items():
            cache = runner.profiles
            if cache is not None:
                runner.profiles = type(cache)()
                log.info("%s: resource profiles will be re-measured", name)


def _scheduler_class() -> Any:
    """APScheduler 3's BackgroundScheduler, except that its thread looks for due jobs only
    while running: the stock one also does once ``shutdown`` set it stopped, and submits the
    job to the executor shutdown has just closed (a logged traceback)."""
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.schedulers.base import STATE_RUNNING

    class Scheduler(BackgroundScheduler):
        def _process_jobs(self) -> Any:
            return super()._process_jobs() if self.state == STATE_RUNNING else None

    return Scheduler


def _now() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC)


class ServiceStopping(Exception):
    """Raised instead of a next run once the service is stopping."""


class _Stoppable(RunnerWrapper):
    """Refuses new runs once ``stopping`` is set (the runs in flight end normally)."""

    def __init__(self, inner: Runner, stopping: threading.Event) -> None:
        super().__init__(inner)
        self.stopping = stopping

    def run(self, request: RunRequest) -> RunOutcome:
        if self.stopping.is_set():
            raise ServiceStopping("the service is stopping")
        return self.inner.run(request)

    def run_many(self, requests: Sequence[RunRequest],
                 on_outcome: OutcomeCallback | None = None) -> list[RunOutcome]:
        if self.stopping.is_set():
            raise ServiceStopping("the service is stopping")
        return self.inner.run_many(requests, on_outcome)


def serve_forever(service: Service, until_idle: bool = False, tick_s: float = 0.5) -> None:
    """Block until Ctrl-C (or, with ``until_idle``, until nothing is queued or running)."""
    service.start()
    try:
        while True:
            time.sleep(tick_s)
            if until_idle and service.idle():
                return
    finally:
        service.shutdown(wait=True)
