"""The campaign service behind ``nimo serve``: APScheduler 3 with its job store in the
campaign database.

* ``dispatch`` (every ``poll_s``) starts queued campaigns whose hosts are all free: the hosts
  are leased in the store in one transaction (a host is never used by two campaigns at once),
  then a one-off job runs the campaign (``workbench.campaigns.resume``: a fresh campaign is a
  resume with nothing stored).
* Failed runs are retried by policy (``RetryingRunner``); a campaign that raises is queued
  again up to ``campaign_attempts`` times, then marked failed with the reason.
* Every ``remeasure_s``, running live campaigns drop their cached resource profiles, so
  profiles are measured again at the next runs.
* On start, campaigns a dead service left starting/running get their leases released and are
  queued again; resuming them repeats no finished run.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from nimo.campaign import RetryingRunner
from nimo.campaign.runners import StoppableRunner
from nimo.errors import NimoError
from nimo.records import CampaignInfo, CampaignStatus
from nimo.runner import Runner
from nimo.store import default_url, normalise_url, open_store
from workbench.processes import pid_alive

log = logging.getLogger("nimo.serve")
RunnerFactory = Callable[[CampaignInfo], Runner]
ACTIVE = tuple(s for s in CampaignStatus if s.active)
_SERVICE: Service | None = None


def dispatch_job() -> None:
    """Scheduler entry point (referenced by name in the persistent job store)."""
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
        self.store = open_store(store_url)
        self.store_url = store_url
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.poll_s = poll_s
        self.workers = workers
        self.run_attempts = run_attempts
        self.campaign_attempts = campaign_attempts
        self.remeasure_s = remeasure_s
        self.runner_factory = runner_factory
        self.scheduler: Any = None
        self._lock = threading.Lock()
        self._runners: dict[str, Runner] = {}

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
        from apscheduler.schedulers.background import BackgroundScheduler

        global _SERVICE
        _SERVICE = self
        self.recover()
        url = normalise_url(self.store_url or default_url())
        self.scheduler = BackgroundScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=url, tablename="nimo_scheduler_jobs")},
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
        """Stop: running campaigns' runs are killed and torn down, the campaigns queued
        again for the next service; then the scheduler ends (waiting for them)."""
        global _SERVICE
        with self._lock:
            running = list(self._runners.values())
        for runner in running:
            if isinstance(runner, StoppableRunner):
                runner.stop()
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=wait)
        if _SERVICE is self:
            _SERVICE = None
        self.store.close()

    def idle(self) -> bool:
        """No campaign queued, starting or running."""
        return not any(c.status is CampaignStatus.QUEUED or c.status.active
                       for c in self._submitted())

    def _submitted(self) -> list[CampaignInfo]:
        return [c for c in self.store.campaigns() if c.spec.get("submitted")]

    # -- jobs ------------------------------------------------------------------------
    def recover(self) -> None:
        """Requeue campaigns a dead service left starting/running; free its leases."""
        leases = self.store.leases()
        for info in self._submitted():
            if not info.status.active:
                continue
            owners = {lease.owner for lease in leases if lease.campaign == info.name}
            if any(_owner_alive(o) for o in owners):
                continue
            self.store.release_hosts(info.name)
            if self.store.set_status(info.name, CampaignStatus.QUEUED, expect=ACTIVE):
                log.info("requeued %s (left %s by a stopped service)", info.name, info.status)

    def dispatch(self) -> None:
        """Start every queued campaign whose hosts can all be leased now."""
        with self._lock:
            for info in self.store.campaigns(status=CampaignStatus.QUEUED):
                hosts = list(info.spec.get("hosts") or ())
                if not self.store.acquire_hosts(info.name, hosts, self.owner):
                    continue
                if not self.store.set_status(info.name, CampaignStatus.STARTING,
                                             expect=[CampaignStatus.QUEUED]):
                    self.store.release_hosts(info.name, self.owner)
                    continue
                log.info("starting %s on %s", info.name, ", ".join(hosts) or "no hosts")
                self.scheduler.add_job(run_campaign_job, "date", run_date=_now(),
                                       args=[info.name], id=f"nimo-campaign:{info.name}",
                                       replace_existing=True)

    def run_campaign(self, name: str) -> None:
        from workbench.campaigns import resume
        from workbench.runners import open_runner_for

        info = self.store.campaign(name)
        held = {lease.host for lease in self.store.leases()
                if lease.campaign == name and lease.owner == self.owner}
        if set(info.spec.get("hosts") or ()) - held or not self.store.set_status(
                name, CampaignStatus.RUNNING, expect=[CampaignStatus.STARTING]):
            return  # a job a previous instance left: dispatch leases and starts it anew
        base = self.runner_factory or open_runner_for

        def factory(info: CampaignInfo) -> Runner:
            runner = StoppableRunner(base(info))
            with self._lock:
                self._runners[name] = runner
            return RetryingRunner(runner, self.run_attempts)

        try:
            result = resume(name, store_url=self.store_url, progress=False,
                            runner_factory=factory)
            log.info("%s done: %s, %d runs", name, result.stopped_because, len(result.iterations))
        except Exception as e:  # one line in the store; the service keeps serving
            self._failed(name, e)
        except KeyboardInterrupt as e:  # the service is stopping: the next one resumes it
            self.store.set_status(name, CampaignStatus.QUEUED,
                                  stopped_because=f"service stopped ({e})")
            log.info("%s interrupted and queued again: the service is stopping", name)
        finally:
            with self._lock:
                self._runners.pop(name, None)
            self.store.release_hosts(name, self.owner)

    def _failed(self, name: str, error: Exception) -> None:
        """Queue the campaign again once, or mark it failed; a fatal setup error or the
        failure policy (``CampaignStopped``) fails it at once: a retry would fail alike."""
        from workbench.executor.stops import CampaignStopped

        info = self.store.campaign(name)
        attempts = int(info.spec.get("service_attempts") or 0) + 1
        self.store.update_spec(name, service_attempts=attempts)
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if attempts < self.campaign_attempts and not isinstance(error, CampaignStopped):
            self.store.set_status(name, CampaignStatus.QUEUED, stopped_because=reason)
            log.warning("%s failed (%s); queued again (attempt %d)", name, reason, attempts + 1)
        else:
            self.store.set_status(name, CampaignStatus.FAILED, stopped_because=reason)
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


def _now() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC)


def _owner_alive(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's service: treated as stopped once this one starts
    if int(pid) == os.getpid():
        return False
    return pid_alive(int(pid))


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
