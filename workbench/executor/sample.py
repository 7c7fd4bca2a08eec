"""A run's measurements -> its ``Sample`` (Algorithm 3 plus the run's meta); pure.

Nothing here touches a connection: the run (``workbench.executor.attempt``) gathers
:class:`RunFacts` and this module turns them into T, the measurements of Algorithm 3, the
sample's meta and, at the end, its cost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from nimo.records import Sample
from workbench.collector import (
    RunMeasurements,
    collect,
    parse_ack_rtt,
    parse_io_stat,
    parse_rpc_srt,
    rtt_from,
)
from workbench.emulation import CgroupUsage, NetworkRecord
from workbench.errors import AppFailed
from workbench.monitors import MonitorReport
from workbench.remote import CommandResult

# Stamps G's wall time on the compute host; G's argv follows as "$@" (never parsed by a shell).
TIMER = ["sh", "-c",
         'a=$(date +%s.%N); "$@"; rc=$?; b=$(date +%s.%N); echo "nimo-T $a $b $rc" >&2; '
         'exit $rc', "nimo-timer"]
_TIMER_LINE = re.compile(r"^nimo-T (\d+\.\d+) (\d+\.\d+) (\d+)$", re.M)


def parse_timer(stderr: str) -> tuple[float, int] | None:
    """(T seconds, exit code) from the TIMER stamp in G's stderr, if present."""
    found = _TIMER_LINE.findall(stderr)
    if not found:
        return None
    a, b, rc = found[-1]
    return float(b) - float(a), int(rc)


def app_time(result: CommandResult, oom_kills: int, memory_mb: float | None) -> float:
    """T of a finished G; raises :class:`AppFailed` (exit code, OOM kills, stderr tail) when
    G failed."""
    stamped = parse_timer(result.stderr)
    rc = stamped[1] if stamped else result.exit_code
    if rc != 0 or result.exit_code != 0:
        tail = _TIMER_LINE.sub("", result.stderr)
        tail = " ".join(tail.split())[-200:] or "(no stderr)"
        limit = "unlimited" if memory_mb is None else memory_mb
        oom = f" after {oom_kills} OOM kill(s) (memory_mb={limit})" if oom_kills else ""
        raise AppFailed(f"G exited {rc}{oom}: {tail}")
    return stamped[0] if stamped else result.duration_s


def app_summary(stdout: str) -> dict[str, Any] | None:
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


@dataclass(frozen=True)
class RunHosts:
    """Who ran it: the compute and storage hosts, the storage host's data address."""

    compute: str
    storage: str
    storage_address: str


@dataclass(frozen=True)
class RunFacts:
    """Everything one finished run measured; the input of :func:`build_sample`.

    ``kinds`` maps knob kinds (``cpu_share``, ``memory_mb``, ...) to the assigned values;
    ``cpu_s`` is the CPU time G used in its cgroup; ``timing`` is shared with the caller,
    which may add figures to it after the sample was built.
    """

    assignment: dict[str, float]
    kinds: dict[str, float]
    hosts: RunHosts
    run_id: str
    attempt: int
    app: str
    threads: int
    T: float
    cpu_s: float
    usage: CgroupUsage
    report: MonitorReport
    profile: dict[str, float]
    mount_method: str
    network: NetworkRecord | None
    stdout: str
    timing: dict[str, float] = field(default_factory=dict)


def build_sample(facts: RunFacts) -> Sample:
    """Algorithm 3 on the run's measurements, with the run's meta."""
    meta = run_meta(facts)
    meta["timing"] = facts.timing  # the same dict: later figures are added to it
    return collect(facts.assignment, measurements(facts), facts.profile, meta=meta)


def measurements(facts: RunFacts) -> RunMeasurements:
    """The inputs of Algorithm 3: T, CPU, data moved and what splits the I/O time."""
    report, profile = facts.report, facts.profile
    requests, rtt, nfs_client = _compute_capture(facts)
    nfs_server = None
    if report.capture_storage is not None:
        nfs_server = parse_rpc_srt(report.capture_storage.text, f"storage:{facts.hosts.storage}")
    if "rtt_ms" in profile:
        rtt = profile["rtt_ms"] / 1000.0
    disk_busy = None
    if report.sar_storage is not None:
        disks = report.sar_storage.disks.values()
        disk_busy = sum(d.util_pct for d in disks) / 100.0 * facts.T
    return RunMeasurements(
        T_s=facts.T, cpu_s=facts.cpu_s, cpus=facts.kinds.get("cpu_share") or float(facts.threads),
        data_bytes=report.data.total_bytes if report.data else 0, method=facts.mount_method,
        requests=requests, rtt_s=rtt,
        bandwidth_mbit=profile.get("bandwidth_mbit") or facts.kinds.get("rate_mbit"),
        nfs_client=nfs_client, nfs_server=nfs_server, disk_busy_s=disk_busy)


def _compute_capture(facts: RunFacts) -> tuple[int | None, float | None, Any]:
    """(data requests, ACK RTT seconds, NFS client rpc,srt) from the compute host's capture."""
    cap = facts.report.capture_compute
    if cap is None:
        return None, None, None
    src = f"compute:{facts.hosts.compute}"
    requests = sum(row.frames[0] for row in parse_io_stat(cap.text, src))
    ack = rtt_from(parse_ack_rtt(cap.text, src), facts.hosts.storage_address)
    nfs_client = parse_rpc_srt(cap.text, src) if cap.nfs else None
    return requests, ack.median_s if ack else None, nfs_client


def run_meta(facts: RunFacts) -> dict[str, Any]:
    """The sample meta: hosts, limits and throttling, data path, sar summaries, app output."""
    usage, report = facts.usage, facts.report
    meta: dict[str, Any] = {
        "host": facts.hosts.compute, "storage_host": facts.hosts.storage,
        "run_id": facts.run_id, "attempt": facts.attempt,
        "app": facts.app, "mount": facts.mount_method,
        "cpus_allotted": facts.kinds.get("cpu_share"), "throttled_s": round(usage.throttled_s, 3),
        "nr_throttled": usage.nr_throttled, "oom_kills": usage.oom_kills,
        "memory_peak_mb": None if usage.memory_peak_bytes is None
        else round(usage.memory_peak_bytes / 2**20, 1),
    }
    if facts.network is not None:
        meta["network"] = [{"host": e.host, "iface": e.iface, "delay": e.delay_method,
                            "delay_ms": e.delay_ms, "rate_mbit": e.rate_mbit}
                           for e in facts.network.ends]
    if report.data is not None:
        meta["data_path"] = {"rx_bytes": report.data.rx_bytes, "tx_bytes": report.data.tx_bytes,
                             "rx_packets": report.data.rx_packets,
                             "tx_packets": report.data.tx_packets}
    for key, summary in (("sar_compute", report.sar_compute),
                         ("sar_storage", report.sar_storage)):
        if summary is not None:
            meta[key] = summary.to_dict()
    if report.errors:
        meta["monitor_errors"] = list(report.errors)
    output = app_summary(facts.stdout)
    if output:
        meta["app_output"] = output
    return meta


def with_cost(sample: Sample, cost: float, teardown_s: float, overhead: float) -> Sample:
    """The sample charged the attempt's cost, its timing completed."""
    timing = dict(sample.meta.get("timing", {}))
    timing.update(teardown_s=round(teardown_s, 3), overhead_s=round(overhead, 3),
                  cost_s=round(cost, 3))
    return replace(sample, cost_s=cost, meta={**sample.meta, "timing": timing})
