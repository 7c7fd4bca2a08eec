"""A finished job -> the run's outcome (pure): Slurm's state and reason, or the Sample.

A run is done only when the job COMPLETED and its step wrote ``result.json`` with exit
code 0. Every other end is a failed run whose reason names the job, its state, Slurm's
reason, the exit code and, for node failures, the nodes' own reasons (``scontrol show
node``), plus the tail of the job's stderr.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nimo.records import Sample
from workbench.executor.sample import app_summary
from workbench.slurm.commands import JobInfo

_CPU_LINE = re.compile(r"^nimo-cpu (\S+) (\d+)$", re.M)
TAIL_CHARS = 200


@dataclass(frozen=True)
class JobEnd:
    """Everything collected about one finished job."""

    job_id: str
    info: JobInfo | None  # None: slurmctld forgot the job
    result: Mapping[str, Any] | None  # the step's result.json, if it got that far
    stdout: str
    stderr: str
    nodes: Sequence[str]
    node_reasons: Mapping[str, str] = field(default_factory=dict)
    timing: Mapping[str, float] = field(default_factory=dict)


def parse_result(text: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def cpu_seconds(stderr: str) -> tuple[float, dict[str, float]]:
    """Total CPU seconds of the job's per-node cgroups and the figure per node (each
    node's last task prints the node's total: the largest reading)."""
    per_node: dict[str, float] = {}
    for node, ns in _CPU_LINE.findall(stderr):
        per_node[node] = max(per_node.get(node, 0.0), int(ns) / 1e9)
    return sum(per_node.values()), per_node


def stderr_tail(stderr: str) -> str:
    """G's last stderr; srun's own lines (exit codes the reason already has) are dropped
    when G wrote any, so they never push G's cause out of the tail."""
    lines = _CPU_LINE.sub("", stderr).splitlines()
    own = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("srun:")]
    return " ".join(" ".join(own or lines).split())[-TAIL_CHARS:]


def failure_reason(end: JobEnd) -> str | None:
    """Why the job is a failed run (one line), or None when it succeeded."""
    info, result = end.info, end.result
    state = info.state if info else "UNKNOWN"
    rc = result.get("rc") if result else None
    if state == "COMPLETED" and rc == 0:
        return None
    parts = [f"Slurm job {end.job_id} {state}"]
    if info is None:
        parts.append("(slurmctld no longer knows the job and it wrote no result)")
    else:
        details = [f"Reason={info.reason}"] if info.reason and info.reason != "None" else []
        if info.exit_code and info.exit_code != "0:0":
            details.append(f"ExitCode={info.exit_code}")
        if details:
            parts.append("(" + ", ".join(details) + ")")
    if rc not in (None, 0):
        parts.append(f"G exited {rc}")
    for node, why in end.node_reasons.items():
        parts.append(f"node {node} {why}")
    tail = stderr_tail(end.stderr)
    if tail:
        parts.append(f"stderr: {tail}")
    return "; ".join(parts)


def build_sample(end: JobEnd, assignment: Mapping[str, float], kinds: Mapping[str, float],
                 app: str, partition: str | None) -> Sample:
    """The Sample of a successful job: T is the step's wall time (the direct kind)."""
    assert end.result is not None
    T = float(end.result["t1"]) - float(end.result["t0"])
    cpu_s, per_node = cpu_seconds(end.stderr)
    meta: dict[str, Any] = {
        "executor": "slurm", "app": app, "host": end.nodes[0] if end.nodes else None,
        "nodes": list(end.nodes), "cpus_allotted": kinds.get("cpu_share"),
        "cpu_s": round(cpu_s, 3),
        "slurm": {"job_id": end.job_id, "node_list": end.info.node_list if end.info else None,
                  "state": end.info.state if end.info else None, "partition": partition,
                  "cpu_s_per_node": {k: round(v, 3) for k, v in per_node.items()}},
        "timing": dict(end.timing),
    }
    output = app_summary(end.stdout)
    if output:
        meta["app_output"] = output
    return Sample(assignment=dict(assignment), T=T, meta=meta)
