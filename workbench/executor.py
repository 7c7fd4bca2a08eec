"""The live SSH executor: ``SSHRunner`` runs G(I) on the inventory's hosts (Algorithm 2) and
turns each run's measurements into a Sample (Algorithm 3).

One run on compute host C wired to storage host S::

    mount S's export on C -> network emulation on the C<->S data link -> cgroup on C with the
    CPU/memory limits -> work dir -> resource profile (cached per assignment) -> monitors ->
    G inside the cgroup (with the timeout) -> stop monitors -> collect -> teardown (reverse)

Teardown always runs, in reverse order, also on failure, timeout and KeyboardInterrupt; every
step's teardown is attempted even when an earlier one failed. A failed run is a
``RunOutcome(status=FAILED, reason=<one line>)``; ``run`` never raises for it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import one_line
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from nimo.runner import OutcomeCallback
from nimo.space import Assignment, ResourceSpace
from workbench import apps as shipped
from workbench.collector import (
    RunMeasurements,
    collect,
    parse_ack_rtt,
    parse_io_stat,
    parse_rpc_srt,
    rtt_from,
)
from workbench.emulation import (
    CgroupSpec,
    LinkEnd,
    NetworkSpec,
    apply_network,
    create_cgroup,
    scope_name,
)
from workbench.errors import AppFailed, CommandTimeout, HostError, ParseError, WorkbenchError
from workbench.inventory import Host, Inventory, load_inventory, render_argv
from workbench.monitors import Endpoint, MonitorReport, RunMonitors, find_sadc
from workbench.profiles import (
    PROBE_PORT_BASE,
    ProfileCache,
    ProfileTargets,
    measure_cpu,
    measure_network,
)
from workbench.remote import Connection
from workbench.storage import mount_dataset, unmount_dataset

APP_DIR = "/tmp/nimo-apps"
# Stamps G's wall time on the compute host; G's argv follows as "$@" (never parsed by a shell).
TIMER = ["sh", "-c",
         'a=$(date +%s.%N); "$@"; rc=$?; b=$(date +%s.%N); echo "nimo-T $a $b $rc" >&2; '
         'exit $rc', "nimo-timer"]
_TIMER_LINE = re.compile(r"^nimo-T (\d+\.\d+) (\d+\.\d+) (\d+)$", re.M)
_ROUTE_DEV = re.compile(r"\bdev (\S+)")



@dataclass
class _Teardown:
    """Reverse-order teardown that attempts every step and collects the errors."""

    steps: list[tuple[str, Callable[[], Any]]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def push(self, name: str, fn: Callable[[], Any]) -> None:
        self.steps.append((name, fn))

    def run(self) -> None:
        t0 = time.monotonic()
        while self.steps:
            name, fn = self.steps.pop()
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - every step must be attempted
                self.errors.append(f"{name}: {one_line(e, limit=300)}")
        self.seconds += time.monotonic() - t0



def parse_timer(stderr: str) -> tuple[float, int] | None:
    """(T seconds, exit code) from the TIMER stamp in G's stderr, if present."""
    found = _TIMER_LINE.findall(stderr)
    if not found:
        return None
    a, b, rc = found[-1]
    return float(b) - float(a), int(rc)


def _app_summary(stdout: str) -> dict[str, Any] | None:
    """The last stdout line of a shipped app (a JSON summary), trimmed for the sample meta."""
    lines = [ln for ln in stdout.strip().splitlines() if ln.strip()]
    if not lines:
        return None
    try:
        doc = json.loads(lines[-1])
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    return {k: v for k, v in doc.items() if not isinstance(v, dict | list) or k == "pass_seconds"}


class SSHRunner:
    """``nimo.runner.Runner`` on the hosts of an inventory (live runs over SSH)."""

    def __init__(self, inventory: Inventory, *, connect_timeout: float = 10.0,
                 connect_retries: int = 2, app_dir: str = APP_DIR) -> None:
        self.inventory = inventory
        self.app_dir = app_dir
        self.connect_timeout = connect_timeout
        self.connect_retries = connect_retries
        self.profiles = ProfileCache()
        self.failures = 0
        self.stopped_because: str | None = None
        self._space = inventory.space()
        self._conns: dict[str, Connection] = {}
        self._lock = threading.RLock()
        self._prepared: dict[str, threading.Event] = {}
        self._sadc: dict[str, str | None] = {}
        self._peer_iface: dict[str, str] = {}
        self._used: set[Assignment] = set()
        self._interrupted = threading.Event()

    # -- Runner protocol ---------------------------------------------------------------
    @property
    def space(self) -> ResourceSpace:
        return self._space

    def run(self, request: RunRequest) -> RunOutcome:
        """Run once on the first compute host (with retries of transient failures)."""
        return self._run_with_retries(self.inventory.compute_hosts[0], request)

    def run_many(self, requests: Sequence[RunRequest],
                 on_outcome: OutcomeCallback | None = None) -> list[RunOutcome]:
        """Run independent requests concurrently, one at a time per compute host.

        Outcomes come back in request order and go to ``on_outcome`` as each finishes.
        Ctrl-C stops handing out new runs, lets the running ones tear down, then re-raises.
        """
        pending = list(enumerate(requests))
        results: dict[int, RunOutcome] = {}
        lock = threading.Lock()

        def worker(host: Host) -> None:
            while True:
                with lock:
                    if not pending or self._interrupted.is_set():
                        return
                    i, req = pending.pop(0)
                outcome = self._not_run(req) if self.stopped_because else \
                    self._run_with_retries(host, req)
                with lock:
                    results[i] = outcome
                    if on_outcome is not None:
                        on_outcome(outcome)

        hosts = self.inventory.compute_hosts[: max(1, len(requests))]
        self._interrupted.clear()
        pool = ThreadPoolExecutor(max_workers=len(hosts), thread_name_prefix="nimo-run")
        futures = [pool.submit(worker, h) for h in hosts]
        try:
            for f in futures:
                f.result()
        except KeyboardInterrupt:
            self._interrupted.set()  # no new runs; running ones tear down (a 2nd ^C abandons)
            with contextlib.suppress(KeyboardInterrupt):
                for f in futures:
                    f.exception()
            raise
        finally:
            pool.shutdown(wait=False)
        return [results[i] for i in range(len(requests)) if i in results]

    def close(self) -> None:
        """Close every connection (idempotent)."""
        with self._lock:
            for conn in self._conns.values():
                with contextlib.suppress(Exception):
                    conn.close()
            self._conns.clear()

    def __enter__(self) -> SSHRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers for campaigns ---------------------------------------------------------
    def holdout(self, n: int, exclude: Iterable[Assignment | dict[str, float]] = (),
                seed: int = 0) -> list[dict[str, float]]:
        """``n`` random candidate assignments (dicts) not in ``exclude`` nor run so far."""
        excluded = {self._space.from_dict(a) if isinstance(a, dict) else tuple(a)
                    for a in exclude} | set(self._used)
        free = [c for c in self._space.candidates if c not in excluded]
        if n > len(free):
            raise WorkbenchError(f"holdout of {n} asked but only {len(free)} assignments left")
        rng = np.random.default_rng(seed)
        picks = rng.choice(len(free), size=n, replace=False)
        return [self._space.as_dict(free[int(i)]) for i in sorted(picks)]

    # -- connections -------------------------------------------------------------------
    def conn(self, name: str, lane: str | None = None) -> Connection:
        """The persistent connection to a host (opened lazily). ``lane`` (a compute host's
        name) gives a shared storage host one connection per concurrent run, so runs never
        share an SSH/SFTP session across threads."""
        key = name if lane is None or lane == name else f"{name}@{lane}"
        with self._lock:
            if key not in self._conns:
                self._conns[key] = Connection.for_host(
                    self.inventory.host(name), connect_timeout=self.connect_timeout,
                    retries=self.connect_retries)
            return self._conns[key]

    # -- one run -----------------------------------------------------------------------
    def _not_run(self, request: RunRequest) -> RunOutcome:
        now = time.time()
        return RunOutcome(request, RunStatus.FAILED, reason=f"not run: {self.stopped_because}",
                          started_at=now, ended_at=now)

    def _run_with_retries(self, host: Host, request: RunRequest) -> RunOutcome:
        """``application.repeats`` runs (each with retries of transient failures); the
        outcome is the repeat with the median T, charged the cost of all repeats."""
        repeats: list[RunOutcome] = []
        for _ in range(self.inventory.application.repeats):
            outcome = self._retrying(host, request)
            repeats.append(outcome)
            if not outcome.ok:
                break
        outcome = _median_repeat(repeats)
        self._account(outcome)
        return outcome

    def _retrying(self, host: Host, request: RunRequest) -> RunOutcome:
        outcome: RunOutcome | None = None
        for attempt in range(self.inventory.policies.retries + 1):
            outcome, transient = self._attempt(host, request, attempt)
            if outcome.ok or not transient:
                break
            with contextlib.suppress(Exception):
                self.conn(host.name).close()
                self.conn(self.inventory.storage_for(host).name, host.name).close()
        assert outcome is not None
        return outcome

    def _account(self, outcome: RunOutcome) -> None:
        with self._lock:
            with contextlib.suppress(WorkbenchError, KeyError, ValueError, TypeError):
                self._used.add(self._space.from_dict(outcome.request.assignment))
            if outcome.ok:
                return
            self.failures += 1
            pol = self.inventory.policies
            if pol.on_failure == "stop" and self.stopped_because is None:
                self.stopped_because = (f"stopped after run {outcome.request.run} failed "
                                        "(policies.on_failure: stop)")
            elif pol.max_failures is not None and self.failures >= pol.max_failures:
                self.stopped_because = (f"{self.failures} failed runs reached "
                                        f"policies.max_failures={pol.max_failures}")

    def _attempt(self, host: Host, request: RunRequest, attempt: int) -> tuple[RunOutcome, bool]:
        """One attempt; returns the outcome and whether a failure is transient."""
        started, t0 = time.time(), time.monotonic()
        teardown = _Teardown()
        ctx = _RunContext(self, host, request, attempt, teardown)
        sample: Sample | None = None
        reason: str | None = None
        transient = False
        try:
            try:
                try:
                    finish = ctx.execute()
                finally:
                    teardown.run()  # overlaps with the monitors' analysis started by execute
                sample = finish()
            finally:
                ctx.run_finals()
        except HostError as e:
            reason, transient = f"{ctx.phase}: {one_line(e, limit=300)}", True
        except AppFailed as e:
            reason = one_line(e, limit=300)
        except (WorkbenchError, ParseError, OSError, ValueError) as e:
            reason = f"{ctx.phase}: {one_line(e, limit=300)}"
        except Exception as e:  # noqa: BLE001 - a bug must not abort a campaign either
            reason = f"{ctx.phase}: internal error {type(e).__name__}: {one_line(e, limit=300)}"
        cost = time.monotonic() - t0
        if teardown.errors:
            extra = "teardown incomplete: " + "; ".join(teardown.errors)
            reason = f"{reason}; {extra}" if reason else extra
            sample = None
        ended = time.time()
        # setup + teardown + collection; measuring the resource profile (once per setting,
        # Section 2.5) is reported apart as timing.profile_measure_s
        profile_s = float(ctx.timing.get("profile_measure_s", 0.0))
        overhead = cost - (sample.T if sample is not None else ctx.app_s) - profile_s
        if sample is not None and reason is None:
            sample = _with_cost(sample, cost, teardown.seconds, overhead)
            return RunOutcome(request, RunStatus.DONE, sample, None, overhead, host.name,
                              started, ended), False
        return RunOutcome(request, RunStatus.FAILED, None, reason or "unknown failure",
                          overhead, host.name, started, ended), transient

    # -- per-host preparation (once per runner) ----------------------------------------
    def _prepare(self, compute: Host, storage: Host) -> None:
        for host in (storage, compute):
            with self._lock:
                event = self._prepared.get(host.name)
                first = event is None
                if first:
                    event = self._prepared[host.name] = threading.Event()
            if first:
                try:
                    self._prepare_host(host)
                except BaseException:
                    with self._lock:
                        del self._prepared[host.name]
                    event.set()
                    raise
                event.set()
            else:
                event.wait(600)
                if host.name not in self._prepared:
                    raise HostError(f"{host.name}: preparation failed in another run")

    def _prepare_host(self, host: Host) -> None:
        conn = self.conn(host.name)
        conn.run(["mkdir", "-p", self.app_dir], timeout=30)
        with self._lock:  # hosts of a lab may share one file system: upload one at a time
            for f in shipped.script_files():
                conn.put(f, f"{self.app_dir}/{f.name}", mode=0o755)
        self._sadc[host.name] = find_sadc(conn) if self.inventory.monitors.sar else None
        if host.role == "storage":
            self._ensure_dataset(host, conn)

    def _ensure_dataset(self, host: Host, conn: Connection) -> None:
        app, st = self.inventory.application, self.inventory.storage
        path = f"{st.export}/{app.dataset.path}"
        conn.run(["mkdir", "-p", st.export], timeout=30)
        if app.dataset.generate:
            argv = render_argv(app.dataset.generate, self._values(path, "/tmp", 0, {}))
            conn.run(argv, timeout=max(600.0, app.timeout_s))
        elif not conn.run(["test", "-e", path], check=False, timeout=10).ok:
            raise WorkbenchError(f"{host.name}: dataset {path} is missing and "
                                 "application.dataset.generate is not set")

    def _storage_iface(self, compute: Host, storage: Host) -> str:
        if compute.peer_iface:
            return compute.peer_iface
        with self._lock:
            if compute.name in self._peer_iface:
                return self._peer_iface[compute.name]
        r = self.conn(storage.name, compute.name).run(["ip", "-o", "route", "get",
                                                       compute.data_address],
                                        timeout=10)
        m = _ROUTE_DEV.search(r.stdout)
        iface = m.group(1) if m else storage.data_iface
        with self._lock:
            self._peer_iface[compute.name] = iface
        return iface

    def _values(self, dataset: str, workdir: str, run: int,
                assignment: dict[str, float]) -> dict[str, object]:
        app = self.inventory.application
        return {"dataset": dataset, "workdir": workdir, "threads": app.threads,
                "app_dir": self.app_dir, "size_mb": app.dataset.size_mb or 0, "run": run,
                **assignment}


def _median_repeat(repeats: list[RunOutcome]) -> RunOutcome:
    """One outcome for all repeats: the last failure, or the median-T sample charged the
    summed cost (its meta lists every repeat's T)."""
    if len(repeats) == 1:
        return repeats[0]
    cost = sum((o.ended_at or 0.0) - (o.started_at or 0.0) for o in repeats)
    if not repeats[-1].ok:
        bad = repeats[-1]
        return dataclasses.replace(bad, reason=f"repeat {len(repeats)}: {bad.reason}",
                                   started_at=repeats[0].started_at)
    ranked = sorted(repeats, key=lambda o: o.sample.T)  # type: ignore[union-attr]
    mid = ranked[(len(ranked) - 1) // 2]
    assert mid.sample is not None
    meta = {**mid.sample.meta, "repeats_T": [o.sample.T for o in repeats]}  # type: ignore[union-attr]
    sample = dataclasses.replace(mid.sample, cost_s=cost, meta=meta)
    return dataclasses.replace(mid, sample=sample, overhead_s=sum(o.overhead_s for o in repeats),
                               started_at=repeats[0].started_at, ended_at=repeats[-1].ended_at)


def _parallel(tasks: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run independent steps concurrently; value or exception per key (never raises)."""
    with ThreadPoolExecutor(max_workers=len(tasks), thread_name_prefix="nimo-step") as pool:
        futures = {k: pool.submit(fn) for k, fn in tasks.items()}
    return {k: (f.exception() if f.exception() is not None else f.result())
            for k, f in futures.items()}


def _with_cost(sample: Sample, cost: float, teardown_s: float, overhead: float) -> Sample:
    meta = dict(sample.meta)
    timing = dict(meta.get("timing", {}))
    timing.update(teardown_s=round(teardown_s, 3), overhead_s=round(overhead, 3),
                  cost_s=round(cost, 3))
    meta["timing"] = timing
    return Sample(assignment=sample.assignment, T=sample.T, D=sample.D, U=sample.U,
                  o_a=sample.o_a, o_n=sample.o_n, o_d=sample.o_d, cost_s=cost,
                  profile=sample.profile, meta=meta)


class _RunContext:
    """Algorithm 2 for one attempt; every side effect pushes its undo onto ``teardown``."""

    def __init__(self, runner: SSHRunner, host: Host, request: RunRequest, attempt: int,
                 teardown: _Teardown) -> None:
        self.r = runner
        self.inv = runner.inventory
        self.compute = host
        self.storage = self.inv.storage_for(host)
        self.request = request
        self.teardown = teardown
        self.run_id = f"r{request.run}-{attempt}-{secrets.token_hex(2)}"
        self.attempt = attempt
        self.phase = "setup"
        self.app_s = 0.0
        self.timing: dict[str, float] = {}
        self.finals: list[Callable[[], Any]] = []

    def run_finals(self) -> None:
        """Clean-ups that must wait for the monitors' analysis (their files)."""
        for fn in self.finals:
            with contextlib.suppress(Exception):
                fn()
        self.finals.clear()

    def _tick(self, name: str, t0: float) -> float:
        now = time.monotonic()
        self.timing[name] = round(now - t0, 3)
        return now

    def execute(self) -> Callable[[], Sample]:
        """Set up, run G and halt the monitors; returns ``finish`` which analyses the monitor
        output and builds the Sample (called after teardown, so they overlap)."""
        inv, r = self.inv, self.r
        assignment = r.space.as_dict(r.space.from_dict(self.request.assignment))
        kinds = {k.kind: assignment[k.name] for k in inv.knobs}
        cconn, sconn = r.conn(self.compute.name), r.conn(self.storage.name, self.compute.name)
        t = time.monotonic()
        self.phase = "prepare"
        r._prepare(self.compute, self.storage)
        s_iface = r._storage_iface(self.compute, self.storage)
        t = self._tick("prepare_s", t)

        # Algorithm 2 steps 1-2 plus the cgroup: independent, so set up concurrently.
        self.phase = "setup"
        got = _parallel({
            "mount": lambda: self._mount(cconn, sconn),
            "network": lambda: self._network(cconn, sconn, s_iface, kinds),
            "cgroup": lambda: self._cgroup(cconn, kinds),
        })
        failed = [(k, v) for k, v in got.items() if isinstance(v, BaseException)]
        if failed:
            self.phase = failed[0][0]
            raise failed[0][1]
        mount, net_record, (cg, workdir) = got["mount"], got["network"], got["cgroup"]
        t = self._tick("setup_s", t)

        self.phase = "profile"
        profile = self._profile(assignment, kinds, cconn, sconn, cg.prefix([]))
        t = self._tick("profile_s", t)

        self.phase = "monitors"
        # /tmp/nimo-<run>-mon.<host token>: swept by `nimo clean`/lab down if we die
        mon_id = f"{self.run_id}-mon"
        mon = RunMonitors(
            Endpoint(cconn, self.compute.data_iface, self.compute.data_address,
                     f"/tmp/{scope_name(cconn, mon_id)}"),
            Endpoint(sconn, s_iface, self.storage.data_address,
                     f"/tmp/{scope_name(sconn, mon_id)}"),
            sar=inv.monitors.sar, sar_interval_s=inv.monitors.sar_interval_s,
            tshark=inv.monitors.tshark, nfs_version=3 if mount.method == "nfs" else None,
            sadc=r._sadc, max_s=inv.application.timeout_s + 120)
        self.finals.append(mon.cleanup)
        started = _parallel({"monitors": mon.start, "usage": cg.usage})
        for v in started.values():
            if isinstance(v, BaseException):
                raise v
        cpu_before = started["usage"].cpu_s  # the profile's benchmark ran in this cgroup
        t = self._tick("monitors_start_s", t)

        self.phase = "running"
        dataset = f"{mount.mountpoint}/{inv.application.dataset.path}"
        argv = render_argv(inv.application.command,
                           r._values(dataset, workdir, self.request.run, assignment))
        t_app = time.monotonic()
        try:
            res = cconn.run(cg.prefix([*TIMER, *argv]), timeout=inv.application.timeout_s,
                            check=False)
        except CommandTimeout:
            self.app_s = time.monotonic() - t_app
            raise AppFailed(f"timeout: G exceeded application.timeout_s="
                            f"{inv.application.timeout_s:g} s and was killed") from None
        self.app_s = time.monotonic() - t_app
        t = self._tick("app_wall_s", t)

        self.phase = "collecting"
        halted = _parallel({"monitors": mon.halt, "usage": cg.usage})
        for v in halted.values():
            if isinstance(v, BaseException):
                raise v
        usage = halted["usage"]
        self._tick("monitors_stop_s", t)
        stamped = parse_timer(res.stderr)
        rc = stamped[1] if stamped else res.exit_code
        if rc != 0 or res.exit_code != 0:
            tail = _TIMER_LINE.sub("", res.stderr)
            tail = " ".join(tail.split())[-200:] or "(no stderr)"
            oom = (f" after {usage.oom_kills} OOM kill(s) (memory_mb="
                   f"{kinds.get('memory_mb', 'unlimited')})" if usage.oom_kills else "")
            raise AppFailed(f"G exited {rc}{oom}: {tail}")
        T = stamped[0] if stamped else res.duration_s
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nimo-analyse")
        analysis = pool.submit(mon.analyse)
        pool.shutdown(wait=False)

        def finish() -> Sample:
            t1 = time.monotonic()
            report = analysis.result()
            self.timing["analysis_s"] = round(report.analysis_s, 3)
            meta = self._meta(mount, net_record, usage, report, res.stdout, kinds)
            meta["timing"] = self.timing  # the same dict: later figures are added to it
            m = self._measurements(T, usage.cpu_s - cpu_before, kinds.get("cpu_share"), report,
                                   profile, kinds, mount.method)
            sample = collect(assignment, m, profile, meta=meta)
            self._tick("collect_wait_s", t1)
            return sample

        return finish

    def _mount(self, cconn: Connection, sconn: Connection) -> Any:
        st = self.inv.storage
        mount = mount_dataset(
            cconn, sconn, st.export, storage_address=self.storage.data_address,
            run_id=self.run_id, method=st.method,
            identity_file=st.identity_file or self.storage.key_file,
            known_hosts=st.known_hosts or self.storage.known_hosts,
            ssh_port=self.storage.port, ssh_user=self.storage.user, mountpoint=st.mountpoint)
        self.teardown.push("unmount", lambda: unmount_dataset(cconn, mount))
        return mount

    def _network(self, cconn: Connection, sconn: Connection, s_iface: str,
                 kinds: dict[str, float]) -> Any:
        spec = NetworkSpec(delay_ms=kinds.get("delay_ms", 0.0), rate_mbit=kinds.get("rate_mbit"))
        if spec.is_noop:
            return None
        applied = apply_network(
            [LinkEnd(cconn, self.compute.data_iface, self.storage.data_address),
             LinkEnd(sconn, s_iface, self.compute.data_address)], spec, run_id=self.run_id)
        self.teardown.push("network", applied.teardown)
        return applied.record

    def _cgroup(self, cconn: Connection, kinds: dict[str, float]) -> tuple[Any, str]:
        cg = create_cgroup(cconn, CgroupSpec(cpus=kinds.get("cpu_share"),
                                             memory_mb=kinds.get("memory_mb")),
                           run_id=self.run_id)
        self.teardown.push("cgroup", cg.remove)
        workdir = f"{self.inv.application.workdir}/nimo-{self.run_id}.{self.compute.name}"
        cconn.run(["mkdir", "-p", workdir], timeout=30)
        self.teardown.push("workdir", lambda: cconn.run(["rm", "-rf", "--", workdir],
                                                        timeout=60))
        return cg, workdir

    def _profile(self, assignment: dict[str, float], kinds: dict[str, float], cconn: Connection,
                 sconn: Connection, prefix: list[str]) -> dict[str, float]:
        """The assignment's resource profile; each part measured once per setting."""
        r = self.r
        if not self.inv.monitors.profile:
            return {}
        index = [h.name for h in self.inv.compute_hosts].index(self.compute.name)
        targets = ProfileTargets(cconn, sconn, self.storage.data_address,
                                 PROBE_PORT_BASE + index, kinds.get("rate_mbit"))
        profile: dict[str, float] = {}
        parts = (
            (("cpu", kinds.get("cpu_share")),
             lambda: measure_cpu(targets, prefix)),
            (("net", kinds.get("delay_ms"), kinds.get("rate_mbit")),
             lambda: measure_network(targets)),
        )
        t0 = time.monotonic()
        for key, fn in parts:
            full = (self.compute.name, *key)
            part = r.profiles.get(full)
            if part is None:
                part = fn()
                r.profiles.put(full, part)
            profile.update(part)
        if "memory_mb" in kinds:
            profile["memory_mb"] = float(kinds["memory_mb"])
        self.timing["profile_measure_s"] = round(time.monotonic() - t0, 3)
        return profile

    def _measurements(self, T: float, cpu_s: float, cpus: float | None, report: MonitorReport,
                      profile: dict[str, float], kinds: dict[str, float],
                      method: str) -> RunMeasurements:
        requests = rtt = None
        nfs_client = nfs_server = None
        cap = report.capture_compute
        if cap is not None:
            src = f"compute:{self.compute.name}"
            rows = parse_io_stat(cap.text, src)
            requests = sum(row.frames[0] for row in rows)
            ack = rtt_from(parse_ack_rtt(cap.text, src), self.storage.data_address)
            rtt = ack.median_s if ack else None
            if cap.nfs:
                nfs_client = parse_rpc_srt(cap.text, src)
        if report.capture_storage is not None:
            nfs_server = parse_rpc_srt(report.capture_storage.text,
                                       f"storage:{self.storage.name}")
        if "rtt_ms" in profile:
            rtt = profile["rtt_ms"] / 1000.0
        disk_busy = None
        if report.sar_storage is not None:
            s = report.sar_storage
            disk_busy = sum(d.util_pct for d in s.disks.values()) / 100.0 * T
        bw = profile.get("bandwidth_mbit") or kinds.get("rate_mbit")
        return RunMeasurements(
            T_s=T, cpu_s=cpu_s, cpus=cpus or float(self.inv.application.threads),
            data_bytes=report.data.total_bytes if report.data else 0, method=method,
            requests=requests, rtt_s=rtt, bandwidth_mbit=bw, nfs_client=nfs_client,
            nfs_server=nfs_server, disk_busy_s=disk_busy)

    def _meta(self, mount: Any, net_record: Any, usage: Any, report: MonitorReport,
              stdout: str, kinds: dict[str, float]) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "host": self.compute.name, "storage_host": self.storage.name,
            "run_id": self.run_id, "attempt": self.attempt,
            "app": self.inv.application.name, "mount": mount.method,
            "cpus_allotted": kinds.get("cpu_share"), "throttled_s": round(usage.throttled_s, 3),
            "nr_throttled": usage.nr_throttled, "oom_kills": usage.oom_kills,
            "memory_peak_mb": None if usage.memory_peak_bytes is None
            else round(usage.memory_peak_bytes / 2**20, 1),
        }
        if net_record is not None:
            meta["network"] = [{"host": e.host, "iface": e.iface, "delay": e.delay_method,
                                "delay_ms": e.delay_ms, "rate_mbit": e.rate_mbit}
                               for e in net_record.ends]
        if report.data is not None:
            meta["data_path"] = {"rx_bytes": report.data.rx_bytes,
                                 "tx_bytes": report.data.tx_bytes,
                                 "rx_packets": report.data.rx_packets,
                                 "tx_packets": report.data.tx_packets}
        for key in ("sar_compute", "sar_storage"):
            summary = getattr(report, key)
            if summary is not None:
                meta[key] = summary.to_dict()
        if report.errors:
            meta["monitor_errors"] = list(report.errors)
        summary = _app_summary(stdout)
        if summary:
            meta["app_output"] = summary
        return meta


def open_runner(inventory_path: str | Path, **kwargs: Any) -> SSHRunner:
    """An SSHRunner for an inventory file (for the CLI)."""
    return SSHRunner(load_inventory(inventory_path), **kwargs)


__all__ = ["SSHRunner", "open_runner", "parse_timer"]
