"""One attempt of one run on compute host C wired to storage host S (Algorithm 2)::

    prepare hosts -> (network emulation on the C<->S link, then mount S's export on C) | cgroup
    on C with the CPU/memory limits and a work dir -> resource profile (cached per setting) ->
    monitors -> G inside the cgroup (with the timeout) -> halt monitors -> teardown (reverse)
    while the monitors' output is analysed -> Sample

Every side effect pushes its undo onto a :class:`Teardown` (an ``ExitStack``): it always runs,
in reverse order, also on failure, timeout and KeyboardInterrupt, and each step's error is
collected instead of stopping the others.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from workbench.clean import remove_empty_parents
from workbench.emulation import (
    Cgroup,
    CgroupSpec,
    CgroupUsage,
    LinkEnd,
    NetworkRecord,
    NetworkSpec,
    apply_network,
    create_cgroup,
)
from workbench.emulation.hostobjects import check_parent, forget, private_dir
from workbench.errors import AppFailed, CommandTimeout, EmulationError, WorkbenchError
from workbench.executor.hosts import HostPool
from workbench.executor.links import diagnose_sshfs, is_sshfs_failure
from workbench.executor.reasons import cause_first, failure_reason
from workbench.executor.sample import TIMER, RunFacts, RunHosts, app_time, build_sample, with_cost
from workbench.executor.stops import FatalSetupError, RunAborted, fatal_cause, killed_on
from workbench.inventory import Host, render_argv
from workbench.monitors import Endpoint, MonitorReport, RunMonitors
from workbench.profiles import PROBE_PORT_BASE, ProfileCache, ProfileTargets, measure_profile
from workbench.remote import CommandResult, Connection
from workbench.remote.group import run_parallel
from workbench.storage import MountRecord, mount_dataset, unmount_dataset
from workbench.workload import dataset_relpath

# a work dir's parent another campaign removes between our check and our mktemp is made
# again, this many times at most
WORKDIR_TRIES = 3


class Teardown(contextlib.ExitStack):
    """Undo steps run in reverse order on exit; every step runs and each failure is kept in
    ``errors`` (never raised). ``seconds`` is the time the steps took."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str] = []
        self.seconds = 0.0

    def push_step(self, name: str, undo: Callable[[], Any]) -> None:
        """Register ``undo`` to run at exit, named ``name`` in errors."""
        self.callback(self._undo, name, undo)

    def _undo(self, name: str, undo: Callable[[], Any]) -> None:
        try:
            undo()
        except Exception as e:  # noqa: BLE001 - every step must be attempted
            self.errors.append(f"{name}: {cause_first(e)}")

    def __exit__(self, *exc: Any) -> bool | None:
        t0 = time.monotonic()
        try:
            return super().__exit__(*exc)
        finally:
            self.seconds += time.monotonic() - t0


def _raise_first(results: dict[str, Any]) -> None:
    for value in results.values():
        if isinstance(value, BaseException):
            raise value


class RunAttempt:
    """Algorithm 2 for one attempt; :meth:`execute` sets up, runs G and halts the monitors."""

    def __init__(self, pool: HostPool, profiles: ProfileCache, host: Host, request: RunRequest,
                 attempt: int, abort: threading.Event) -> None:
        self.pool = pool
        self.abort = abort
        self.inv = pool.inventory
        self.profiles = profiles
        self.compute = host
        self.storage = self.inv.storage_for(host)
        self.request = request
        self.attempt = attempt
        self.run_id = pool.run_id(request.run, attempt)
        self.teardown = Teardown()
        self.finals = contextlib.ExitStack()  # clean-ups that wait for the monitors' analysis
        self.phase = "setup"
        self.app_s = 0.0
        self.timing: dict[str, float] = {}
        self.assignment: dict[str, float] = {}
        self.kinds: dict[str, float] = {}
        self.cconn: Connection  # set by execute: the compute host and this lane's storage
        self.sconn: Connection

    def _tick(self, name: str, t0: float) -> float:
        now = time.monotonic()
        self.timing[name] = round(now - t0, 3)
        return now

    def execute(self) -> Callable[[], Sample]:
        """Set up, run G and halt the monitors; returns ``finish``, which waits for the
        monitors' analysis and builds the Sample (called after teardown, so they overlap)."""
        space = self.pool.space
        self.assignment = space.as_dict(space.from_dict(self.request.assignment))
        self.kinds = {k.kind: self.assignment[k.name] for k in self.inv.knobs}
        self.cconn = self.pool.conn(self.compute.name)
        self.sconn = self.pool.conn(self.storage.name, self.compute.name)
        t = time.monotonic()
        self.phase = "prepare"
        self.pool.prepare(self.compute, self.storage)
        storage_values = self.pool.values(self.storage.name, "", "/tmp", 0, {})
        workload = self.pool.workload.prepare(self.storage.name, self.sconn, self.kinds,
                                              storage_values)
        s_iface = self.pool.storage_iface(self.compute, self.storage)
        t = self._tick("prepare_s", t)
        mount, network, (cg, workdir) = self._set_up(s_iface)
        t = self._tick("setup_s", t)
        self._check_abort()
        self.phase = "profile"
        profile = {**self._profile(cg), **workload}  # + the dataset level's profile
        t = self._tick("profile_s", t)
        self.phase = "monitors"
        monitors = self._monitors(s_iface, mount)
        before = self._both(monitors.start, cg.usage)
        t = self._tick("monitors_start_s", t)
        self._check_abort()
        self.phase = "running"
        result = self._run_app(cg, mount, workdir)
        self._check_abort()
        t = self._tick("app_wall_s", t)
        self.phase = "collecting"
        usage = self._both(monitors.halt, cg.usage)
        self._tick("monitors_stop_s", t)
        T = app_time(result, usage.oom_kills, self.kinds.get("memory_mb"))
        analysis = _in_background(monitors.analyse)

        def finish() -> Sample:
            t0 = time.monotonic()
            report = analysis.result()
            self.timing["analysis_s"] = round(report.analysis_s, 3)
            sample = build_sample(RunFacts(
                assignment=self.assignment, kinds=self.kinds, hosts=self._hosts(),
                run_id=self.run_id, attempt=self.attempt, app=self.inv.application.name,
                threads=self.inv.application.threads, T=T, cpu_s=usage.cpu_s - before.cpu_s,
                usage=usage, report=report, profile=profile, mount_method=mount.method,
                network=network, stdout=result.stdout, timing=self.timing))
            self._tick("collect_wait_s", t0)
            return sample

        return finish

    def _hosts(self) -> RunHosts:
        return RunHosts(self.compute.name, self.storage.name, self.storage.data_address)

    def _set_up(self, s_iface: str) -> tuple[MountRecord, NetworkRecord | None,
                                               tuple[Cgroup, str]]:
        """Algorithm 2 steps 1-2 plus the cgroup, the cgroup beside the other two.

        The link is emulated before the mount opens its connection: a TCP connection that
        starts on the bare link keeps what it measured there (BBR's minimum RTT, for one,
        for 10 s), so a mount made while the delay was still being applied read at a
        fraction of the emulated rate for most of a run (session 60: 22 of 100 Mbit/s at
        10 ms), a race that made run times bimodal.
        """
        self.phase = "setup"
        link_step = "network"  # the link's step under way, for a failure's phase

        def network_then_mount() -> tuple[NetworkRecord | None, MountRecord]:
            nonlocal link_step
            network = self._network(s_iface)
            link_step = "mount"
            return network, self._mount()

        got = run_parallel({"link": network_then_mount, "cgroup": self._cgroup})
        failed = [(k, v) for k, v in got.items() if isinstance(v, BaseException)]
        if failed:
            step, error = failed[0]
            self.phase = link_step if step == "link" else step
            raise error
        network, mount = got["link"]  # type: ignore[misc]
        return mount, network, got["cgroup"]  # type: ignore[return-value]

    def _mount(self) -> MountRecord:
        try:
            mount = self._mount_dataset()
        except WorkbenchError as e:
            diagnosed = diagnose_sshfs(self.cconn, self.inv, self.compute, self.storage, e) \
                if is_sshfs_failure(e) else e
            if diagnosed is e:
                raise
        else:
            self.teardown.push_step("unmount", lambda: unmount_dataset(self.cconn, mount))
            return mount
        raise diagnosed  # outside the handler: its message starts with ssh's own cause

    def _mount_dataset(self) -> MountRecord:
        st, storage = self.inv.storage, self.storage
        return mount_dataset(
            self.cconn, self.sconn, st.export, storage_address=storage.data_address,
            run_id=self.run_id, method=st.method,
            identity_file=st.identity_file or storage.key_file,
            known_hosts=st.known_hosts or storage.known_hosts,
            ssh_port=storage.port, ssh_user=storage.user, mountpoint=st.mountpoint)

    def _network(self, s_iface: str) -> NetworkRecord | None:
        spec = NetworkSpec(delay_ms=self.kinds.get("delay_ms", 0.0),
                           rate_mbit=self.kinds.get("rate_mbit"))
        if spec.is_noop:
            return None
        applied = apply_network(
            [LinkEnd(self.cconn, self.compute.data_iface, self.storage.data_address),
             LinkEnd(self.sconn, s_iface, self.compute.data_address)], spec, run_id=self.run_id)
        self.teardown.push_step("network", applied.teardown)
        return applied.record

    def _cgroup(self) -> tuple[Cgroup, str]:
        spec = CgroupSpec(cpus=self.kinds.get("cpu_share"), memory_mb=self.kinds.get("memory_mb"))
        cg = create_cgroup(self.cconn, spec, run_id=self.run_id)
        self.teardown.push_step("cgroup", cg.remove)
        return cg, self._workdir()

    def _workdir(self) -> str:
        """The run's private work dir in the application's workdir. The pool made a missing
        parent; one removed since (another campaign ended while it was empty), even between
        this check and the mktemp, is made again, recorded for this run, and removed with
        the work dir if empty."""
        parent = self.inv.application.workdir
        made: list[str] = []
        self.teardown.push_step("workdir parents", lambda: remove_empty_parents(self.cconn, made))
        for attempt in range(1, WORKDIR_TRIES + 1):
            if parent != "/tmp":
                made += [d for d in check_parent(self.cconn, parent, self.run_id)
                         if d not in made]
            try:
                workdir = private_dir(self.cconn, self.run_id, "work", parent, checked=True)
            except EmulationError:
                if parent == "/tmp" or attempt == WORKDIR_TRIES:
                    raise
                continue
            self.teardown.push_step("workdir", partial(
                self.cconn.run, ["rm", "-rf", "--", workdir], timeout=60))
            return workdir
        raise AssertionError("unreachable")

    def _monitors(self, s_iface: str, mount: MountRecord) -> RunMonitors:
        mon = self.inv.monitors
        # private dirs, recorded: `nimo clean` ends sadc/dumpcap writing there if we die
        dirs = run_parallel({c.name: partial(private_dir, c, self.run_id, "mon")
                             for c in (self.cconn, self.sconn)})
        _raise_first(dirs)
        monitors = RunMonitors(
            Endpoint(self.cconn, self.compute.data_iface, self.compute.data_address,
                     str(dirs[self.cconn.name])),
            Endpoint(self.sconn, s_iface, self.storage.data_address, str(dirs[self.sconn.name])),
            sar=mon.sar, sar_interval_s=mon.sar_interval_s, tshark=mon.tshark,
            nfs_version=3 if mount.method == "nfs" else None, sadc=self.pool.sadc,
            max_s=self.inv.application.timeout_s + 120)
        self.finals.callback(_quietly, monitors.cleanup)
        return monitors

    @staticmethod
    def _both(monitor_step: Callable[[], Any], usage: Callable[[], CgroupUsage]) -> CgroupUsage:
        """A monitors step and a cgroup usage reading, concurrently; the usage."""
        got = run_parallel({"monitors": monitor_step, "usage": usage})
        _raise_first(got)
        return got["usage"]  # type: ignore[return-value]

    def _run_app(self, cg: Cgroup, mount: MountRecord, workdir: str) -> CommandResult:
        app = self.inv.application
        dataset = f"{mount.mountpoint}/{dataset_relpath(self.inv, self.kinds)}"
        values = self.pool.values(self.compute.name, dataset, workdir, self.request.run,
                                  self.assignment)  # a categorical knob's level: its name
        argv = render_argv(app.command, {**values, **self.inv.argv_values(self.assignment)})
        t0 = time.monotonic()
        try:
            with killed_on(self.abort, cg):
                result = self.cconn.run(cg.prefix([*TIMER, *argv]), timeout=app.timeout_s,
                                        check=False)
        except CommandTimeout:
            self.app_s = time.monotonic() - t0
            raise AppFailed(f"timeout: G exceeded application.timeout_s={app.timeout_s:g} s "
                            "and was killed") from None
        self.app_s = time.monotonic() - t0
        return result

    def _check_abort(self) -> None:
        if self.abort.is_set():
            raise RunAborted(f"run {self.request.run} on {self.compute.name} stopped")

    def _profile(self, cg: Cgroup) -> dict[str, float]:
        """The assignment's resource profile; each part measured once per setting."""
        if not self.inv.monitors.profile:
            return {}
        lane = [h.name for h in self.inv.compute_hosts].index(self.compute.name)
        targets = ProfileTargets(self.cconn, self.sconn, self.storage.data_address,
                                 PROBE_PORT_BASE + lane, self.kinds.get("rate_mbit"))
        t0 = time.monotonic()
        profile = measure_profile(self.profiles, self.compute.name, self.kinds, targets,
                                  cg.prefix([]))
        self.timing["profile_measure_s"] = round(time.monotonic() - t0, 3)
        return profile


def _quietly(fn: Callable[[], Any]) -> None:
    with contextlib.suppress(Exception):
        fn()


def _in_background(fn: Callable[[], MonitorReport]) -> Future[MonitorReport]:
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nimo-analyse")
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    return future


def _forget_if_torn_down(run: RunAttempt) -> None:
    """Every object of the run is removed: the hosts' markers (and store rows) go too; if
    not, the pool sweeps the campaign's leftovers when it closes (``HostPool.close``)."""
    run.pool.left_behind |= bool(run.teardown.errors)
    if "prepare_s" in run.timing and not run.teardown.errors:
        for conn in filter(None, (getattr(run, "cconn", None), getattr(run, "sconn", None))):
            with contextlib.suppress(Exception):
                forget(conn, run.run_id)


def run_attempt(pool: HostPool, profiles: ProfileCache, host: Host, request: RunRequest,
                attempt: int, abort: threading.Event | None = None) -> tuple[RunOutcome, bool]:
    """One attempt; returns the outcome and whether a failure is transient (worth a retry).
    Raises ``FatalSetupError`` (after the teardown) when the failure will fail every run:
    a host refused us (key, host key, known_hosts) or a needed tool is missing; and
    ``RunAborted`` (after the teardown, even one left incomplete) once ``abort`` is set."""
    started, t0 = time.time(), time.monotonic()
    run = RunAttempt(pool, profiles, host, request, attempt, abort or threading.Event())
    sample: Sample | None = None
    try:
        with run.finals:
            with run.teardown:  # overlaps with the monitors' analysis started by execute
                finish = run.execute()
            sample = finish()
        reason, transient = None, False
    except RunAborted:
        _forget_if_torn_down(run)
        raise
    except Exception as e:  # noqa: BLE001 - a bug must not abort a campaign either
        if run.abort.is_set():  # failed because it was stopped (a connect cut short)
            _forget_if_torn_down(run)
            raise RunAborted(f"run {request.run} on {host.name} stopped") from e
        fatal = fatal_cause(e)
        if fatal is not None:
            raise FatalSetupError(f"run {request.run} on {host.name}, {run.phase}: {fatal}",
                                  hint="fix the host (see `nimo doctor INVENTORY`), "
                                  "then `nimo campaign resume`") from e
        reason, transient = failure_reason(run.phase, e)
    cost = time.monotonic() - t0
    _forget_if_torn_down(run)
    if run.teardown.errors:
        extra = "teardown incomplete: " + "; ".join(run.teardown.errors)
        if run.abort.is_set():  # stopped mid-teardown (a host cut): interrupted, not failed
            raise RunAborted(f"run {request.run} on {host.name} stopped; {extra}")
        reason = f"{reason}; {extra}" if reason else extra
        sample = None
    # setup + teardown + collection; the resource profile is timing.profile_measure_s
    profile_s = float(run.timing.get("profile_measure_s", 0.0))
    overhead = cost - (sample.T if sample is not None else run.app_s) - profile_s
    if sample is not None and reason is None:
        sample = with_cost(sample, cost, run.teardown.seconds, overhead)
        return RunOutcome(request, RunStatus.DONE, sample, None, overhead, host.name,
                          started, time.time()), False
    return RunOutcome(request, RunStatus.FAILED, None, reason or "unknown failure",
                      overhead, host.name, started, time.time()), transient
