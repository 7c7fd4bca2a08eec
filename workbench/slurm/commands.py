"""The Slurm client commands the runner uses: sbatch, squeue, scontrol, scancel, sinfo.

Only commands that talk to slurmctld (no slurmdbd, so never sacct). ``SLURM_CONF`` is set
from the inventory's ``slurm.conf``. The parsers are pure (unit-tested on recorded output).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.errors import WorkbenchError

TIMEOUT_S = 30.0
_FIELD = re.compile(r"(\S+?)=(\S*)")


class SlurmCommandError(WorkbenchError):
    """A Slurm client command failed (its stderr in the message)."""


@dataclass(frozen=True)
class JobInfo:
    """What ``scontrol show job`` says of a job (the fields the runner reads)."""

    job_id: str
    state: str
    reason: str
    exit_code: str
    node_list: str
    name: str = ""
    comment: str = ""

    @property
    def finished(self) -> bool:
        return self.state not in ACTIVE_STATES


# Job states that may still change (``squeue --states`` names); every other one is final.
ACTIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
                 "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "REQUEUE_HOLD",
                 "REQUEUE_FED", "RESV_DEL_HOLD")


def parse_fields(line: str) -> dict[str, str]:
    """``Key=Value`` pairs of one ``scontrol -o`` line (values without spaces)."""
    return {k: v for k, v in _FIELD.findall(line)}


def parse_job(line: str) -> JobInfo:
    """A ``scontrol show job -o`` line as :class:`JobInfo`."""
    f = parse_fields(line)
    reason = _reason(line)
    return JobInfo(job_id=f.get("JobId", ""), state=f.get("JobState", "UNKNOWN"),
                   reason=reason, exit_code=f.get("ExitCode", ""),
                   node_list=f.get("NodeList", "(null)"), name=f.get("JobName", ""),
                   comment=f.get("Comment", ""))


def _reason(line: str) -> str:
    """``Reason=`` may hold spaces (a node's reason); it ends at the next ``Key=``."""
    m = re.search(r"\bReason=(.*?)(?= [A-Z][A-Za-z/:]*=|$)", line)
    return m.group(1).strip() if m else ""


class SlurmCli:
    """Runs the Slurm client commands against one cluster (``conf``: its slurm.conf)."""

    def __init__(self, conf: str | None = None) -> None:
        self.env = dict(os.environ)
        if conf:
            self.env["SLURM_CONF"] = conf

    def run(self, argv: Sequence[str], *, check: bool = True, stdin: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
        try:
            proc = subprocess.run(list(argv), capture_output=True, text=True, input=stdin,
                                  env=self.env, timeout=TIMEOUT_S, check=False)
        except FileNotFoundError:
            raise SlurmCommandError(f"`{argv[0]}` is not installed",
                                    hint="install slurm-client (scripts/bootstrap.sh)") from None
        except subprocess.TimeoutExpired:
            raise SlurmCommandError(f"`{' '.join(argv[:3])}` got no answer in "
                                    f"{TIMEOUT_S:g} s (is slurmctld up?)") from None
        if check and proc.returncode != 0:
            err = " ".join((proc.stderr or proc.stdout).split())[-300:]
            raise SlurmCommandError(f"`{argv[0]}` exited {proc.returncode}: {err}")
        return proc

    def sbatch(self, options: Sequence[str], script: str) -> str:
        """Submit ``script`` (a file path); the job id."""
        out = self.run(["sbatch", "--parsable", *options, script]).stdout.strip()
        return out.split(";")[0]

    def job(self, job_id: str) -> JobInfo | None:
        """The job as slurmctld knows it, or None once it has forgotten it."""
        proc = self.run(["scontrol", "show", "job", "-o", job_id], check=False)
        if proc.returncode != 0:
            if "Invalid job id" in proc.stderr:
                return None
            raise SlurmCommandError(f"scontrol show job {job_id}: {proc.stderr.strip()}")
        line = proc.stdout.strip().splitlines()
        return parse_job(line[0]) if line else None

    def states(self, job_ids: Sequence[str]) -> dict[str, str]:
        """{job id: state} of the jobs squeue still lists (all states)."""
        if not job_ids:
            return {}
        proc = self.run(["squeue", "-h", "--states=all", "-j", ",".join(job_ids),
                         "-o", "%i|%T"], check=False)
        out = {}
        for line in proc.stdout.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 2:
                out[parts[0]] = parts[1]
        return out

    def jobs_named(self, prefix: str) -> dict[str, str]:
        """{job id: name} of the active jobs whose name starts with ``prefix``."""
        proc = self.run(["squeue", "-h", "-o", "%i|%j"], check=False)
        out = {}
        for line in proc.stdout.splitlines():
            jid, _, name = line.strip().partition("|")
            if name.startswith(prefix):
                out[jid] = name
        return out

    def cancel(self, job_ids: Sequence[str]) -> None:
        if job_ids:
            self.run(["scancel", *job_ids], check=False)

    def hostnames(self, node_list: str) -> list[str]:
        """A node list (``c[1-3]``) expanded."""
        if not node_list or node_list in ("(null)", "None"):
            return []
        return self.run(["scontrol", "show", "hostnames", node_list]).stdout.split()

    def node_reasons(self, nodes: Sequence[str]) -> Mapping[str, str]:
        """{node: "STATE: reason"} of the nodes with a reason set (down, drained)."""
        out = {}
        for node in nodes:
            proc = self.run(["scontrol", "show", "node", "-o", node], check=False)
            f = parse_fields(proc.stdout)
            reason = _reason(proc.stdout)
            if reason:
                out[node] = f"{f.get('State', '?')}: {reason}"
        return out

    def partitions(self) -> dict[str, str]:
        """{partition: "AVAIL NODES STATES"} from sinfo (partition names without ``*``)."""
        out = self.run(["sinfo", "-h", "-o", "%P|%a|%D|%t"]).stdout
        got: dict[str, str] = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 4:
                name = parts[0].rstrip("*")
                got[name] = (got.get(name, "") + f" {parts[2]} {parts[3]}").strip()
                got[name] = f"{parts[1]}: " + got[name].split(": ")[-1]
        return got
