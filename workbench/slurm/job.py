"""One run as one Slurm batch job (pure): its sbatch options, batch script and task wrapper.

The assignment becomes Slurm resources: ``nodes`` -> ``--nodes``, ``tasks_per_node`` ->
``--ntasks-per-node``, ``application.threads`` -> ``--cpus-per-task``, ``memory_mb`` (or
``slurm.mem_mb``) -> ``--mem`` per node, ``slurm.partition``/``slurm.constraint`` ->
``--partition``/``--constraint``, ``application.timeout_s`` -> ``--time`` (whole minutes:
Slurm's granularity). ``cpu_share`` is the CPU share of each node: every task on a node
joins one per-job ``cpu`` cgroup (v1 or v2) with that quota (``TASK_WRAPPER``), whose CPU
accounting each task prints when it ends (``nimo-cpu NODE NANOSECONDS`` on stderr).

The batch script stamps the job's start, runs G as one job step (``srun``) over the
allocation and writes ``result.json`` (exit code, step start/end, node list) into the run's
directory on shared storage, so a job that ends while nimo is down is still collected.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CFS_PERIOD_US = 100_000
TASK_WRAPPER_NAME = "nimo-slurm-task.sh"
RESULT = "result.json"

# $1 = CPU quota per node (microseconds per CFS_PERIOD_US; 0: none); G's argv follows.
TASK_WRAPPER = r"""#!/bin/sh
# nimo: one task of a Slurm job step in the node's per-job cpu cgroup (quota = CPU share)
q=$1; shift
[ "$q" = 0 ] && exec "$@"
name="slurm-nimo-j${SLURM_JOB_ID}.$(hostname)"
# join DIR PROCS_FILE LIMIT: make DIR, set its quota, move in; a sibling task that ends
# rmdirs the (then empty) cgroup, so whoever lost that race makes it again. Once in, the
# dir cannot be removed under us.
join() {
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    { mkdir -p "$1" && $3 "$1" && echo $$ > "$1/$2"; } 2>/dev/null && return 0
  done
  echo "nimo: cannot join cgroup $1" >&2; exit 125
}
quota2() { echo "$q 100000" > "$1/cpu.max"; }
quota1() { echo 100000 > "$1/cpu.cfs_period_us" && echo "$q" > "$1/cpu.cfs_quota_us"; }
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers
then
  cg=/sys/fs/cgroup/$name; acct=$cg; join "$cg" cgroup.procs quota2
else
  cpu=/sys/fs/cgroup/cpu; [ -d "$cpu" ] || cpu=/sys/fs/cgroup/cpu,cpuacct
  ac=/sys/fs/cgroup/cpuacct; [ -d "$ac" ] || ac=$cpu
  cg=$cpu/$name; acct=$ac/$name; join "$cg" tasks quota1
  [ "$acct" = "$cg" ] || join "$acct" tasks true
fi
"$@"; rc=$?
if [ -f "$acct/cpuacct.usage" ]; then used=$(cat "$acct/cpuacct.usage")
else used=$(( $(sed -n 's/^usage_usec //p' "$acct/cpu.stat") * 1000 )); fi
echo "nimo-cpu ${SLURMD_NODENAME:-$(hostname)} $used" >&2
if [ "$acct" = "$cg" ] && [ -f /sys/fs/cgroup/cgroup.procs ]; then
  echo $$ > /sys/fs/cgroup/cgroup.procs
else echo $$ > "$cpu/tasks"; echo $$ > "$ac/tasks"; fi
rmdir "$cg" "$acct" 2>/dev/null
exit $rc
"""


@dataclass(frozen=True)
class JobPlan:
    """What one run submits: sbatch options and the batch script's text."""

    name: str
    options: tuple[str, ...]
    script: str


def job_name(tag: str, run: int) -> str:
    """The job name of run ``run`` of the campaign tagged ``tag`` (how cleanup finds ours)."""
    return f"nimo-{tag}-r{run}"


def time_limit_min(timeout_s: float) -> int:
    """``--time`` in whole minutes (Slurm's granularity), at least the app's timeout."""
    return max(1, math.ceil(timeout_s / 60.0))


def sbatch_options(kinds: Mapping[str, float], *, name: str, comment: str, run_dir: Path,
                   threads: int, timeout_s: float, mem_mb: int | None = None,
                   partition: str | None = None, constraint: str | None = None,
                   ) -> list[str]:
    """The sbatch options of one run; ``kinds`` maps knob kinds to assigned values."""
    opts = [f"--job-name={name}", f"--comment={comment}",
            f"--nodes={int(kinds.get('nodes', 1))}",
            f"--ntasks-per-node={int(kinds.get('tasks_per_node', 1))}",
            f"--cpus-per-task={threads}", f"--time={time_limit_min(timeout_s)}",
            f"--output={run_dir / 'out'}", f"--error={run_dir / 'err'}",
            f"--chdir={run_dir}", "--no-requeue", "--kill-on-invalid-dep=yes"]
    mem = kinds.get("memory_mb", mem_mb)
    if mem is not None:
        opts.append(f"--mem={int(mem)}M")
    if partition:
        opts.append(f"--partition={partition}")
    if constraint:
        opts.append(f"--constraint={constraint}")
    return opts


def cpu_quota_us(kinds: Mapping[str, float]) -> int:
    """The per-node CFS quota of the assigned ``cpu_share`` (0: no limit)."""
    share = kinds.get("cpu_share")
    return 0 if share is None else max(1000, round(share * CFS_PERIOD_US))


def batch_script(argv: Sequence[str], *, run_dir: Path, wrapper: str, quota_us: int,
                 header: str) -> str:
    """The batch script: stamp the start, G as one srun step, write ``result.json``."""
    cmd = " ".join(shlex.quote(a) for a in ["sh", wrapper, str(quota_us), *argv])
    rd = shlex.quote(str(run_dir))
    return "\n".join([
        "#!/bin/sh",
        f"# {header}",
        f"rd={rd}",
        'date +%s.%N > "$rd/started.tmp" && mv "$rd/started.tmp" "$rd/started"',
        "t0=$(date +%s.%N)",
        f"srun --kill-on-bad-exit=1 {cmd}",
        "rc=$?",
        "t1=$(date +%s.%N)",
        "printf '{\"rc\": %s, \"t0\": %s, \"t1\": %s, \"node_list\": \"%s\"}\\n' "
        '"$rc" "$t0" "$t1" "$SLURM_JOB_NODELIST" > "$rd/result.tmp"',
        f'mv "$rd/result.tmp" "$rd/{RESULT}"',
        "exit $rc",
        "",
    ])
