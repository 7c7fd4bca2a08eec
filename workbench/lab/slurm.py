"""A Slurm cluster on the namespace lab (``nimo lab up --slurm``).

Layout: one munged in the root namespace with a lab-private key and socket (Unix sockets are
files, so every namespace reaches it), slurmctld inside the storage host's namespace (its
own ports: several labs never collide), one slurmd per compute host inside that host's
namespace, NodeName = the host's UTS name (unique per lab), NodeAddr = its management
address. Every file lives under ``DIR/slurm`` (config, munge key and socket, state and
spool dirs, logs); ``stop_cluster`` kills munged (the daemons inside the namespaces die
with the lab's hosts) and removes the directory.

Enforcement: TaskPlugin=task/none and ProctrackType=proctrack/linuxproc. Slurm's own
task/cgroup plugin wants a cgroup hierarchy per slurmd that this kernel's v1 mounts shared
by every namespace cannot give; the Slurm runner instead puts each job's tasks of a node
into a v1 (or v2) ``cpu`` cgroup with the run's per-node CPU share (quota), and ``--mem`` is
scheduled by Slurm (CR_Core_Memory) but not enforced. Measured: ~1 s to an idle cluster.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from workbench.errors import LabError
from workbench.lab.netns import cgroup_mounts, sh, wait_until
from workbench.lab.network import LabHost

PARTITION = "lab"
NODE_MEMORY_MB = 2048
START_TIMEOUT_S = 20.0


def slurm_dir(lab_dir: Path) -> Path:
    return lab_dir / "slurm"


def conf_path(lab_dir: Path) -> Path:
    return slurm_dir(lab_dir) / "slurm.conf"


def cluster_name(prefix: str) -> str:
    return "".join(c for c in prefix if c.isalnum()) + "lab"


def slurm_conf(d: Path, prefix: str, controller: LabHost, nodes: list[LabHost],
               cpus: int) -> str:
    """The cluster's slurm.conf (pure)."""
    lines = [
        f"# {prefix}lab Slurm cluster, written by `nimo lab up --slurm`",
        f"ClusterName={cluster_name(prefix)}",
        f"SlurmctldHost={controller.hostname}({controller.address})",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", f"AuthInfo=socket={d / 'munge.socket'}", "CredType=cred/munge",
        f"StateSaveLocation={d / 'state'}", f"SlurmdSpoolDir={d / 'spool'}/%n",
        f"SlurmctldPidFile={d / 'slurmctld.pid'}", f"SlurmdPidFile={d / 'slurmd.%n.pid'}",
        f"SlurmctldLogFile={d / 'slurmctld.log'}", f"SlurmdLogFile={d / 'slurmd.%n.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
        "SchedulerType=sched/backfill", "ReturnToService=1",  # a node set down stays down
        # schedule a submitted batch job at once (default: up to 3 s later)
        "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0",
        # finished jobs stay visible to squeue/scontrol for an hour (there is no slurmdbd)
        "MinJobAge=3600", "KillWait=2", "OverTimeLimit=0", "InactiveLimit=0",
        "SlurmdTimeout=30", "SlurmctldTimeout=30", "MessageTimeout=10",
    ]
    for h in nodes:
        lines.append(f"NodeName={h.hostname} NodeAddr={h.address} CPUs={cpus} "
                     f"RealMemory={NODE_MEMORY_MB} State=UNKNOWN")
    lines.append(f"PartitionName={PARTITION} Nodes={','.join(h.hostname for h in nodes)} "
                 "Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def start_cluster(lab_dir: Path, prefix: str, hosts: list[LabHost]) -> dict[str, Any]:
    """munged, slurmctld on the storage host, a slurmd per compute host; waits until every
    node is idle. Returns the state saved to ``DIR/slurm/state.json``."""
    d = slurm_dir(lab_dir)
    for sub in ("state", "spool"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o755)
    controller = next(h for h in hosts if h.role == "storage")
    nodes = [h for h in hosts if h.role == "compute"]
    conf = conf_path(lab_dir)
    conf.write_text(slurm_conf(d, prefix, controller, nodes, os.cpu_count() or 1))
    state: dict[str, Any] = {"conf": str(conf), "partition": PARTITION,
                             "nodes": [h.hostname for h in nodes], "munged_pid": None}
    _save(d, state)
    state["munged_pid"] = _start_munged(d)
    _save(d, state)
    _in_host(controller, ["slurmctld", "-f", str(conf)], prefix)
    for h in nodes:
        _in_host(h, ["slurmd", "-f", str(conf), "-N", h.hostname], prefix)
    if not wait_until(lambda: _all_idle(conf, len(nodes)), START_TIMEOUT_S, interval_s=0.2):
        log = (d / "slurmctld.log").read_text()[-400:] if (d / "slurmctld.log").exists() else ""
        raise LabError(f"the lab's Slurm nodes did not become idle in {START_TIMEOUT_S:g} s",
                       hint=f"see {d}/*.log: {' '.join(log.split())[-200:]}")
    return state


def _save(d: Path, state: dict[str, Any]) -> None:
    (d / "state.json").write_text(json.dumps(state, indent=2) + "\n")


def _start_munged(d: Path) -> int:
    key = d / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    pidfile = d / "munged.pid"
    sh(["munged", "--force", f"--socket={d / 'munge.socket'}", f"--key-file={key}",
        f"--pid-file={pidfile}", f"--log-file={d / 'munged.log'}",
        f"--seed-file={d / 'munged.seed'}"])
    if not wait_until(lambda: pidfile.exists() and pidfile.read_text().strip() != "", 5.0):
        raise LabError(f"munged did not start (see {d / 'munged.log'})")
    return int(pidfile.read_text().strip())


def _in_host(h: LabHost, argv: list[str], prefix: str) -> None:
    """Start a daemon inside ``h``'s namespace, with its UTS name and the cgroups visible."""
    remount = [f"mkdir -p {shlex.quote(mp)} && mount -t {fstype} -o {shlex.quote(opts)} "
               f"{fstype} {shlex.quote(mp)}" for fstype, mp, opts in cgroup_mounts()]
    script = 'set -e; hostname "$1"; ' + "; ".join(remount) + '; shift; exec "$@"'
    sh(["ip", "netns", "exec", h.netns, "unshare", "--uts", "sh", "-c", script,
        f"{prefix}slurm", h.hostname, *argv])


def slurm_env(conf: Path | str) -> dict[str, str]:
    return {**os.environ, "SLURM_CONF": str(conf)}


def _all_idle(conf: Path, n: int) -> bool:
    proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True,
                          env=slurm_env(conf), timeout=10, check=False)
    states = [ln.split()[1] for ln in proc.stdout.splitlines() if len(ln.split()) == 2]
    return proc.returncode == 0 and len(states) == n and all(s == "idle" for s in states)


def stop_cluster(lab_dir: Path) -> list[int]:
    """Kill munged (the namespaced daemons die with the lab's hosts), remove ``DIR/slurm``
    and the job cgroups runs left; returns the PIDs signalled."""
    d = slurm_dir(lab_dir)
    pids: list[int] = []
    state_file = d / "state.json"
    if state_file.exists():
        pid = json.loads(state_file.read_text()).get("munged_pid")
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGTERM)
                pids.append(int(pid))
                wait_until(lambda: not Path(f"/proc/{pid}").exists(), 2.0)
    shutil.rmtree(d, ignore_errors=True)
    return pids


def remove_job_cgroups(hostname: str) -> list[str]:
    """rmdir the per-node job cgroups (``slurm-nimo-*.<host>``) left by killed jobs."""
    root = Path("/sys/fs/cgroup")
    out = []
    for cg in root.glob(f"*/slurm-nimo-*.{hostname}"):
        for _ in range(50):
            try:
                cg.rmdir()
                out.append(str(cg))
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
    return out


def slurm_inventory(doc: dict[str, Any], lab_dir: Path, hosts: list[LabHost]
                    ) -> dict[str, Any]:
    """The lab inventory for the Slurm runner: ``executor: slurm``, the cluster's config, a
    ``nodes`` knob over the compute hosts, a per-node CPU share that fits this machine's
    cores at every node count, tasks per node, and the shipped parallel app ``pwork``."""
    from workbench.apps import APPS

    n = sum(1 for h in hosts if h.role == "compute")
    cores = os.cpu_count() or 1
    shares = sorted({round(cores / n * f, 2) for f in (0.2, 0.4, 0.6, 0.8, 1.0)})
    app = APPS["pwork"].application(timeout_s=120)
    return {
        **{k: v for k, v in doc.items() if k not in ("knobs", "application", "monitors")},
        "executor": "slurm",
        "slurm": {"conf": str(conf_path(lab_dir)), "partition": PARTITION, "max_jobs": 2},
        "knobs": [
            {"name": "nodes", "kind": "nodes", "levels": list(range(1, n + 1))},
            {"name": "cpu_share", "kind": "cpu_share", "levels": shares},
            {"name": "tasks_per_node", "kind": "tasks_per_node", "levels": [1, 2]},
        ],
        "application": app,
        "monitors": {"sar": False, "tshark": False, "profile": False},
    }
