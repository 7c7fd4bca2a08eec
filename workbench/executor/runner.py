"""``SSHRunner``: the ``nimo.runner.Runner`` contract on the hosts of an inventory."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nimo.records import RunOutcome, RunRequest
from nimo.runner import OutcomeCallback
from nimo.space import Assignment, ResourceSpace
from workbench.emulation.hostobjects import ObjectLog, register_hook
from workbench.errors import WorkbenchError
from workbench.executor.attempt import run_attempt
from workbench.executor.hosts import Connect, HostPool
from workbench.executor.rotation import HostRotation
from workbench.executor.schedule import FailureBudget, median_repeat, run_in_lanes
from workbench.executor.stops import CampaignStopped, FailureBudgetExceeded, RunAborted
from workbench.inventory import Host, Inventory, load_inventory
from workbench.profiles import ProfileCache
from workbench.remote import Connection, liveness


class SSHRunner:
    """``nimo.runner.Runner`` on the hosts of an inventory (live runs over SSH).

    ``connect`` opens a host's connection (default: SSH with the inventory's keys); tests
    pass one returning ``workbench.testing.FakeConnection``s.
    """

    kind = "occupancy"
    # run_many runs one per compute host, but concurrent runs share the storage host and
    # would measure each other's traffic: learning asks one at a time (a design's `batch`
    # overrides)
    concurrency = 1

    def __init__(self, inventory: Inventory, *, connect_timeout: float = 10.0,
                 connect_retries: int = 2, connect: Connect | None = None) -> None:
        self.inventory = inventory
        self.profiles = ProfileCache()
        self._path = str(Path(inventory.path).resolve())
        self._pool = HostPool(inventory, connect or (lambda host: Connection.for_host(
            host, connect_timeout=connect_timeout, retries=connect_retries)))
        self._budget = FailureBudget(inventory.policies)
        self._used: set[Assignment] = set()
        self._used_lock = threading.Lock()
        self._interrupted = threading.Event()
        self._hook_campaign: str | None = None
        self._abort = threading.Event()  # kills the running G's (an interrupt, a shutdown)
        self.rotation = HostRotation([h.name for h in inventory.compute_hosts])
        for host in inventory.hosts:  # an earlier campaign's interrupt cut it for good
            liveness.pardon((host.address, host.port))

    # -- Runner contract -------------------------------------------------------------------
    @property
    def space(self) -> ResourceSpace:
        """The assignments the inventory's knobs span."""
        return self._pool.space

    @property
    def hosts(self) -> tuple[str, ...]:
        """The names of the inventory's hosts."""
        return self.inventory.host_names

    def spec(self) -> dict[str, Any]:
        """What reopens this runner: the inventory file's absolute path (JSON-able)."""
        return {"inventory": self._path}

    def run(self, request: RunRequest) -> RunOutcome:
        """Run once on a compute host of the rotation (see :meth:`run_many`)."""
        outcomes = self.run_many([request])
        if not outcomes:
            self._check_budget()
            raise CampaignStopped(f"run {request.run} was not run: the runner was stopped")
        return outcomes[0]

    def run_many(self, requests: Sequence[RunRequest],
                 on_outcome: OutcomeCallback | None = None) -> list[RunOutcome]:
        """Run independent requests concurrently, one at a time per compute host.

        Outcomes come back in request order and go to ``on_outcome`` as each finishes. A
        run that failed for a host reason (after ``policies.retries``) is run on another
        host while its host sits out a backoff (``executor.rotation``); it counts as failed
        once every compute host failed it. Ctrl-C (SIGTERM, SIGHUP) kills the running G's,
        tears them down, then re-raises. When the failure policy says stop, or a fatal
        setup error occurs, no further run is started and, once the running ones have
        finished, ``FailureBudgetExceeded`` or ``FatalSetupError`` is raised (the finished
        ones went to ``on_outcome``).
        """
        self._check_budget()

        def recorded(outcome: RunOutcome) -> None:
            self._note_used(outcome)
            if self._budget.record(outcome):
                self._interrupted.set()  # no new runs in the other lanes
            if on_outcome is not None:
                on_outcome(outcome)

        outcomes = run_in_lanes(self.inventory.compute_hosts, requests, self._run_repeats,
                                recorded, self._interrupted, self.rotation, self._abort)
        if self._abort.is_set():
            raise RunAborted("the runner was stopped")
        self._check_budget()
        return outcomes

    def attach(self, campaign: str, hook: ObjectLog | None = None) -> None:
        """Name every object the runs make on hosts after ``campaign`` (so a resume cleans
        only its own), and record each in ``hook`` too (the campaign's store)."""
        self._pool.campaign = campaign
        self._hook_campaign = campaign
        register_hook(campaign, hook)

    def abort(self) -> None:
        """Stop from another thread (a service shutting down): no new runs, the running
        G's are killed and torn down, and ``run_many`` raises ``RunAborted``."""
        self._abort.set()
        self._interrupted.set()

    def close(self) -> None:
        """Remove the app dirs and close every connection (idempotent)."""
        self._pool.close()
        if self._hook_campaign is not None:
            register_hook(self._hook_campaign, None)

    def __enter__(self) -> SSHRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state -----------------------------------------------------------------------------
    @property
    def failures(self) -> int:
        """Failed runs so far."""
        return self._budget.failures

    @property
    def stopped_because(self) -> str | None:
        """Why no more runs are made (``policies``), or None."""
        return self._budget.stopped_because

    def conn(self, name: str, lane: str | None = None) -> Connection:
        """The persistent connection to a host (see :meth:`HostPool.conn`)."""
        return self._pool.conn(name, lane)

    def holdout(self, n: int, exclude: Iterable[Assignment | dict[str, float]] = (),
                seed: int = 0) -> list[dict[str, float]]:
        """``n`` random candidate assignments (dicts) not in ``exclude`` nor run so far."""
        space = self.space
        excluded = {space.from_dict(a) if isinstance(a, dict) else tuple(a)
                    for a in exclude} | set(self._used)
        free = [c for c in space.candidates if c not in excluded]
        if n > len(free):
            raise WorkbenchError(f"holdout of {n} asked but only {len(free)} assignments left")
        rng = np.random.default_rng(seed)
        picks = rng.choice(len(free), size=n, replace=False)
        return [space.as_dict(free[int(i)]) for i in sorted(picks)]

    # -- scheduling ------------------------------------------------------------------------
    def _check_budget(self) -> None:
        if self.stopped_because:
            raise FailureBudgetExceeded(
                f"{self.inventory.path}: {self.stopped_because}",
                hint="fix what made the runs fail (`nimo campaign status`), then "
                "`nimo campaign resume`")

    def _run_repeats(self, host: Host, request: RunRequest) -> tuple[RunOutcome, bool]:
        """``application.repeats`` runs (each with retries of transient failures); the
        outcome is the repeat with the median T, charged the cost of all repeats; and
        whether it failed for a host reason."""
        repeats: list[RunOutcome] = []
        host_fault = False
        for _ in range(self.inventory.application.repeats):
            outcome, host_fault = self._run_retrying(host, request)
            repeats.append(outcome)
            if not outcome.ok:
                break
        return median_repeat(repeats), host_fault

    def _run_retrying(self, host: Host, request: RunRequest) -> tuple[RunOutcome, bool]:
        for attempt in range(self.inventory.policies.retries + 1):
            outcome, transient = run_attempt(self._pool, self.profiles, host, request, attempt,
                                             self._abort)
            if outcome.ok or not transient:
                break
            self._pool.reset(host)
        return outcome, not outcome.ok and transient

    def _note_used(self, outcome: RunOutcome) -> None:
        try:
            used = self.space.from_dict(outcome.request.assignment)
        except (WorkbenchError, KeyError, ValueError, TypeError):
            return
        with self._used_lock:
            self._used.add(used)


def open_runner(inventory_path: str | Path, **kwargs: Any) -> SSHRunner:
    """An SSHRunner for an inventory file (for the CLI)."""
    return SSHRunner(load_inventory(inventory_path), **kwargs)
