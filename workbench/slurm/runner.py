"""``SlurmRunner``: the ``nimo.runner.Runner`` contract on a Slurm cluster.

Each run is one batch job (``workbench.slurm.job``); up to ``slurm.max_jobs`` jobs are in
flight at once, polled every ``slurm.poll_s`` with one ``squeue`` call and read once
finished with ``scontrol show job`` (no slurmdbd, never sacct). Jobs are named
``nimo-<tag>-r<run>`` (the tag is stored with the campaign, so a resumed campaign finds its
jobs) and carry ``nimo campaign=<tag> run=<N>`` as comment; nimo cancels only jobs it
submitted. Ctrl-C (or SIGTERM) cancels the jobs in flight; after a SIGKILL the jobs go on
and the resumed campaign adopts them (``workbench.slurm.jobs``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import secrets
import shlex
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from nimo.records import RunOutcome, RunRequest, RunStatus
from nimo.runner import OutcomeCallback
from nimo.space import ResourceSpace
from workbench import apps as shipped
from workbench.executor.schedule import FailureBudget
from workbench.executor.stops import FailureBudgetExceeded, FatalSetupError
from workbench.inventory import Inventory, load_inventory, render_argv
from workbench.slurm import jobs as rundirs
from workbench.slurm.commands import ACTIVE_STATES, SlurmCli, SlurmCommandError
from workbench.slurm.job import (
    RESULT,
    TASK_WRAPPER,
    TASK_WRAPPER_NAME,
    JobPlan,
    batch_script,
    cpu_quota_us,
    job_name,
    sbatch_options,
    time_limit_min,
)
from workbench.slurm.jobs import Job
from workbench.slurm.outcome import JobEnd, build_sample, failure_reason, parse_result

RUNTIME_GRACE_S = 120.0  # past --time, nimo cancels a job Slurm did not end


def new_tag(name: str) -> str:
    """A campaign's job tag: the inventory name (job-name safe) and a random suffix."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "", name)[:24] or "campaign"
    return f"{safe}-{secrets.token_hex(3)}"


class SlurmRunner:
    """Runs G as Slurm jobs on the cluster an inventory with ``executor: slurm`` names."""

    kind = "direct"  # a job's wall time T; no occupancies
    profiles: Any = None

    def __init__(self, inventory: Inventory, *, tag: str | None = None,
                 cli: SlurmCli | None = None) -> None:
        self.inventory = inventory
        self.cfg = inventory.slurm
        self.cli = cli or SlurmCli(self.cfg.conf)
        self.tag = tag or new_tag(inventory.name)
        self.work_dir = Path(self.cfg.work_dir or f"{inventory.storage.export}/.nimo-slurm")
        self.jobs_dir = self.work_dir / "jobs" / self.tag
        self.app_dir = self.work_dir / "apps"
        self._path = str(Path(inventory.path).resolve())
        self._space = inventory.space()
        self._budget = FailureBudget(inventory.policies)
        self._active: dict[int, Job] = {}
        self._prepared = False

    # -- Runner contract -------------------------------------------------------------------
    @property
    def space(self) -> ResourceSpace:
        return self._space

    @property
    def hosts(self) -> tuple[str, ...]:
        """What the service leases: the inventory's compute hosts, else the partition."""
        names = tuple(h.name for h in self.inventory.compute_hosts)
        return names or (f"slurm:{self.cfg.partition or 'default'}",)

    @property
    def concurrency(self) -> int:
        """``slurm.max_jobs``: a campaign asks for this many training runs at once."""
        return self.cfg.max_jobs

    def spec(self) -> dict[str, Any]:
        return {"inventory": self._path, "slurm_tag": self.tag}

    def run(self, request: RunRequest) -> RunOutcome:
        return self.run_many([request])[0]

    def run_many(self, requests: Sequence[RunRequest],
                 on_outcome: OutcomeCallback | None = None) -> list[RunOutcome]:
        """Submit (or adopt) a job per request, ``slurm.max_jobs`` in flight; outcomes in
        request order, each also to ``on_outcome`` when its job is collected. Ctrl-C
        cancels the jobs in flight and re-raises."""
        self._check_budget()
        self._prepare()
        pending = list(requests)
        results: dict[int, RunOutcome] = {}
        try:
            while pending or self._active:
                while pending and len(self._active) < self.cfg.max_jobs \
                        and not self._budget.stopped_because:
                    started = self._start(pending.pop(0))
                    if isinstance(started, RunOutcome):
                        self._report(started, results, on_outcome)
                if self._budget.stopped_because:
                    pending.clear()
                for outcome in self._poll():
                    self._report(outcome, results, on_outcome)
                if self._active:
                    time.sleep(self.cfg.poll_s)
        except BaseException:
            self.cancel_active()
            raise
        self._check_budget()
        return [results[r.run] for r in requests if r.run in results]

    def close(self) -> None:
        """Cancel the jobs this runner still has in flight (idempotent)."""
        self.cancel_active()

    def __enter__(self) -> SlurmRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state -----------------------------------------------------------------------------
    @property
    def failures(self) -> int:
        return self._budget.failures

    @property
    def in_flight(self) -> dict[int, str]:
        """{run: job id} of the jobs in flight."""
        return {run: job.job_id for run, job in self._active.items()}

    def cancel_active(self) -> list[str]:
        """scancel this runner's jobs in flight (marked ``cancelled``); their ids."""
        ids = []
        for job in self._active.values():
            rundirs.mark(job.run_dir, rundirs.CANCELLED)
            ids.append(job.job_id)
        self._active.clear()
        with contextlib.suppress(SlurmCommandError):
            self.cli.cancel(ids)
        return ids

    def cancel_all_own(self) -> list[str]:
        """scancel every active job of this campaign's tag (also of a previous life)."""
        ids = list(self.cli.jobs_named(f"nimo-{self.tag}-r"))
        self.cli.cancel(ids)
        return ids

    # -- preparing -------------------------------------------------------------------------
    def _check_budget(self) -> None:
        if self._budget.stopped_because:
            raise FailureBudgetExceeded(f"{self.inventory.path}: {self._budget.stopped_because}",
                                        hint="fix what made the runs fail, then "
                                        "`nimo campaign resume`")

    def _prepare(self) -> None:
        """Once: the shipped scripts on shared storage, the dataset staged by a job."""
        if self._prepared:
            return
        try:
            self.app_dir.mkdir(parents=True, exist_ok=True)
            for f in shipped.script_files():
                shutil.copyfile(f, self.app_dir / f.name)
            rundirs.write_atomic(self.app_dir / TASK_WRAPPER_NAME, TASK_WRAPPER)
            self.jobs_dir.mkdir(parents=True, exist_ok=True)
            self._stage_dataset()
        except (OSError, SlurmCommandError) as e:
            raise FatalSetupError(f"{self.inventory.path}: preparing the Slurm runs: {e}",
                                  hint=f"`nimo doctor {self.inventory.path}`") from e
        self._prepared = True

    def _stage_dataset(self) -> None:
        app = self.inventory.application
        path = self.dataset_path()
        if Path(path, ".nimo-dataset.json").exists() or (
                app.dataset.generate is None and Path(path).exists()):
            return
        if app.dataset.generate is None:
            raise SlurmCommandError(f"dataset {path} is missing and "
                                    "application.dataset.generate is not set")
        argv = render_argv(app.dataset.generate, self._values(str(self.work_dir), 0, {}))
        log = self.work_dir / "stage-dataset.log"
        opts = ["--wait", "--nodes=1", f"--time={time_limit_min(max(600.0, app.timeout_s))}",
                f"--job-name=nimo-{self.tag}-stage", f"--output={log}", f"--chdir={self.work_dir}",
                *self._placement()]
        try:
            self.cli.run(["sbatch", "--parsable", *opts, "--wrap",
                          " ".join(shlex.quote(a) for a in argv)])
        except BaseException:  # interrupted while waiting: the staging job is ours to end
            self.cli.cancel([j for j, n in self.cli.jobs_named(f"nimo-{self.tag}-stage").items()
                             if n == f"nimo-{self.tag}-stage"])
            raise

    def dataset_path(self) -> str:
        return f"{self.inventory.storage.export}/{self.inventory.application.dataset.path}"

    def _placement(self) -> list[str]:
        opts = [f"--partition={self.cfg.partition}"] if self.cfg.partition else []
        return opts + ([f"--constraint={self.cfg.constraint}"] if self.cfg.constraint else [])

    def _values(self, workdir: str, run: int, assignment: dict[str, float]) -> dict[str, object]:
        app = self.inventory.application
        return {"dataset": self.dataset_path(), "workdir": workdir, "threads": app.threads,
                "app_dir": str(self.app_dir), "size_mb": app.dataset.size_mb or 0, "run": run,
                **self.inventory.argv_values(assignment)}

    # -- one run ---------------------------------------------------------------------------
    def _kinds(self, request: RunRequest) -> tuple[dict[str, float], dict[str, float]]:
        assignment = self._space.as_dict(self._space.from_dict(request.assignment))
        return assignment, {k.kind: assignment[k.name] for k in self.inventory.knobs}

    def plan(self, request: RunRequest, rd: Path) -> JobPlan:
        """The job of ``request`` (its run directory ``rd``)."""
        app = self.inventory.application
        assignment, kinds = self._kinds(request)
        name = job_name(self.tag, request.run)
        comment = f"nimo campaign={self.tag} run={request.run} purpose={request.purpose}"
        opts = sbatch_options(kinds, name=name, comment=comment, run_dir=rd,
                              threads=app.threads, timeout_s=app.timeout_s,
                              mem_mb=self.cfg.mem_mb, partition=self.cfg.partition,
                              constraint=self.cfg.constraint)
        argv = render_argv(app.command, self._values(str(rd), request.run, assignment))
        script = batch_script(argv, run_dir=rd, wrapper=str(self.app_dir / TASK_WRAPPER_NAME),
                              quota_us=cpu_quota_us(kinds), header=comment)
        return JobPlan(name, tuple(opts), script)

    def _start(self, request: RunRequest) -> Job | RunOutcome:
        """Adopt the run's job of a previous life, or submit it; a refused submission is a
        failed outcome."""
        rd = rundirs.run_dir(self.jobs_dir, request.run)
        jid, _over = rundirs.previous_job(rd)
        if jid is None and rd.exists():  # killed before sbatch returned: in squeue?
            named = self.cli.jobs_named(job_name(self.tag, request.run))
            exact = [j for j, n in named.items() if n == job_name(self.tag, request.run)]
            if exact:
                jid = exact[0]
                rundirs.write_atomic(rd / rundirs.JOB_ID, jid + "\n")
            else:
                rundirs.retire(rd)
        if jid is not None:
            submitted = (rd / rundirs.JOB_ID).stat().st_mtime
            job = Job(request, rd, jid, submitted, adopted=True)
        else:
            plan = self.plan(request, rd)
            script = rundirs.prepare_dir(rd, plan.script)
            t0 = time.time()
            try:
                jid = self.cli.sbatch(plan.options, str(script))
            except SlurmCommandError as e:
                return self._failed(request, f"sbatch refused the job: {e}", t0, rd)
            rundirs.write_atomic(rd / rundirs.JOB_ID, jid + "\n")
            job = Job(request, rd, jid, t0)
        self._active[request.run] = job
        return job

    def _failed(self, request: RunRequest, reason: str, t0: float, rd: Path) -> RunOutcome:
        return RunOutcome(request, RunStatus.FAILED, None, reason, time.time() - t0, None, t0,
                          time.time())

    def _poll(self) -> Iterator[RunOutcome]:
        if not self._active:
            return
        states = self.cli.states([j.job_id for j in self._active.values()])
        for run, job in list(self._active.items()):
            state = states.get(job.job_id)
            late = self._overdue(job, state)
            if state in ACTIVE_STATES and late is None:
                continue
            if late is not None:
                self.cli.cancel([job.job_id])
            del self._active[run]
            yield self._collect(job, late)

    def _overdue(self, job: Job, state: str | None) -> str | None:
        """Why nimo ends a job Slurm keeps (pending too long, running past --time)."""
        now = time.time()
        if state == "PENDING" and now - job.submitted_at > self.cfg.pending_limit_s:
            info = self.cli.job(job.job_id)
            why = info.reason if info else "?"
            return (f"pending for {now - job.submitted_at:.0f} s > slurm.pending_limit_s="
                    f"{self.cfg.pending_limit_s:g} (Reason={why}); cancelled by nimo")
        limit = time_limit_min(self.inventory.application.timeout_s) * 60 + RUNTIME_GRACE_S
        started = rundirs.started_at(job.run_dir)
        if state == "RUNNING" and started and now - started > limit:
            return f"running {now - started:.0f} s, past --time; cancelled by nimo"
        return None

    def _collect(self, job: Job, nimo_reason: str | None) -> RunOutcome:
        """Read a finished job (scontrol, its run directory) into the run's outcome."""
        info = self.cli.job(job.job_id)
        result = parse_result(rundirs.read_text(job.run_dir / RESULT))
        node_list = info.node_list if info else str((result or {}).get("node_list", ""))
        nodes = self.cli.hostnames(node_list)
        failed_state = info is not None and info.state != "COMPLETED"
        reasons = self.cli.node_reasons(nodes) if failed_state else {}
        collected = time.time()
        started = rundirs.started_at(job.run_dir)
        timing = {"submit_to_start_s": round(started - job.submitted_at, 3) if started else -1.0,
                  "end_to_collected_s": round(collected - float(result["t1"]), 3)
                  if result and "t1" in result else -1.0,
                  "cost_s": round(collected - job.submitted_at, 3)}
        end = JobEnd(job.job_id, info, result, rundirs.read_text(job.run_dir / "out"),
                     rundirs.read_text(job.run_dir / "err"), nodes, reasons, timing)
        _remove_local_cgroups(job.job_id, nodes)
        reason = failure_reason(end)
        if nimo_reason:
            reason = f"{reason or 'Slurm job ' + job.job_id}; {nimo_reason}"
        host = nodes[0] if nodes else None
        if reason is not None:
            return RunOutcome(job.request, RunStatus.FAILED, None, reason,
                              collected - job.submitted_at, host, job.submitted_at, collected)
        assignment, kinds = self._kinds(job.request)
        sample = build_sample(end, assignment, kinds, self.inventory.application.name,
                              self.cfg.partition)
        sample = _with_cost(sample, collected - job.submitted_at, job.adopted)
        return RunOutcome(job.request, RunStatus.DONE, sample, None,
                          max(0.0, collected - job.submitted_at - sample.T), host,
                          job.submitted_at, collected)

    def _report(self, outcome: RunOutcome, results: dict[int, RunOutcome],
                on_outcome: OutcomeCallback | None) -> None:
        results[outcome.request.run] = outcome
        self._budget.record(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
        rundirs.mark(rundirs.run_dir(self.jobs_dir, outcome.request.run), rundirs.COLLECTED)


def _with_cost(sample: Any, cost: float, adopted: bool) -> Any:
    meta = {**sample.meta, "adopted": adopted}
    return dataclasses.replace(sample, cost_s=cost, meta=meta)


def _remove_local_cgroups(job_id: str, nodes: Sequence[str]) -> None:
    """rmdir the job's per-node cgroups when this machine sees them (the lab)."""
    for node in nodes:
        for cg in Path("/sys/fs/cgroup").glob(f"*/slurm-nimo-j{job_id}.{node}"):
            with contextlib.suppress(OSError):
                cg.rmdir()


def open_slurm_runner(inventory_path: str | Path, tag: str | None = None) -> SlurmRunner:
    return SlurmRunner(load_inventory(inventory_path), tag=tag)
