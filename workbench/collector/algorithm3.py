"""Algorithm 3: a run's measurements -> T, U, D and the occupancies o_a, o_n, o_d (pure).

* ``T``: wall time of G, stamped on the compute host around the command.
* ``U``: busy fraction of the CPU the run was allotted = cgroup CPU seconds / (T x cpus), where
  cpus is the run's ``cpu_share`` (one CPU when no CPU knob is explored); clamped to [0, 1].
* ``D``: MB (10^6 bytes) moved on the compute host's data interface (rx + tx) during the run.
  A run that moved none is a valid sample: o_n = o_d = 0, and it counts as one unit of work
  (D = ``NO_DATA_UNIT``, o_a = T); the meta says so (``data_bytes: 0``, ``occupancies``).
* Split of o_s (step 3-4): from NFS per-op times when the traces have them, else an estimate
  recorded in the sample meta as ``split: "estimate"`` with its ``split_method``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nimo.records import Sample, occupancies
from nimo.records.samples import NO_DATA_UNIT, occupancies_without_data
from workbench.collector.tshark import SrtRow

DATA_OPS = ("READ", "WRITE")
MB = 1e6


@dataclass(frozen=True)
class RunMeasurements:
    """Everything the monitors measured for one run (inputs of Algorithm 3)."""

    T_s: float
    cpu_s: float | None
    cpus: float
    data_bytes: int
    method: str  # "nfs" | "sshfs"
    requests: int | None = None  # data-carrying packets compute -> storage
    rtt_s: float | None = None  # data-path round-trip time (profile ping or TCP ACK RTT)
    bandwidth_mbit: float | None = None  # achieved data-path bandwidth (profile)
    nfs_client: Mapping[str, SrtRow] | None = None  # rpc,srt seen on the compute host
    nfs_server: Mapping[str, SrtRow] | None = None  # rpc,srt seen on the storage host
    disk_busy_s: float | None = None  # storage-host disk time during the run (sar -d)
    extra: Mapping[str, Any] = field(default_factory=dict)


def utilisation(cpu_s: float | None, T_s: float, cpus: float) -> tuple[float | None, float | None]:
    """(U clamped to [0, 1], raw ratio); (None, None) when the CPU time is unknown."""
    if cpu_s is None or T_s <= 0 or cpus <= 0:
        return None, None
    raw = cpu_s / (T_s * cpus)
    return min(1.0, max(0.0, raw)), raw


def _avg(rows: Mapping[str, SrtRow]) -> tuple[float, int] | None:
    ops = [r for n, r in rows.items() if n in DATA_OPS and r.calls] or [
        r for r in rows.values() if r.calls
    ]
    calls = sum(r.calls for r in ops)
    return (sum(r.sum_s for r in ops) / calls, calls) if calls else None


def split_io_time(m: RunMeasurements) -> tuple[float | None, float | None, dict[str, Any]]:
    """(network part, storage part) of the average I/O time, with how they were obtained."""
    client = _avg(m.nfs_client) if m.nfs_client else None
    server = _avg(m.nfs_server) if m.nfs_server else None
    if client and server:
        net = max(client[0] - server[0], 0.0)
        return net, server[0], {
            "split": "trace",
            "split_method": "NFS rpc,srt: storage part = server-side service time per data op; "
            "network part = client-observed op time minus it",
            "nfs_ops": client[1], "io_client_s": client[0], "io_server_s": server[0]}
    per_req_bytes = m.data_bytes / m.requests if m.requests else None
    if m.rtt_s is None or not m.bandwidth_mbit or per_req_bytes is None:
        return None, None, {"split": "none", "split_method": "no RTT/bandwidth/request count: "
                            "o_s kept whole in o_n"}
    net = m.rtt_s + per_req_bytes * 8 / (m.bandwidth_mbit * 1e6)
    info: dict[str, Any] = {"split": "estimate", "requests": m.requests,
                            "bytes_per_request": round(per_req_bytes, 1)}
    if client:  # client-side NFS trace only: storage part = op time minus the network part
        disk = max(client[0] - net, 0.0)
        info["split_method"] = ("NFS client op time minus network part (RTT + bytes per op / "
                                "achieved bandwidth)")
    else:
        assert m.requests
        disk = (m.disk_busy_s or 0.0) / m.requests
        info["split_method"] = (f"{m.method} is encrypted/opaque: network part = RTT + bytes "
                                "per request / achieved bandwidth; storage part = storage-host "
                                "disk busy time (sar -d) per request")
    info.update(io_net_s=net, io_disk_s=disk)
    return net, disk, info


def collect(assignment: Mapping[str, float], m: RunMeasurements,
            profile: Mapping[str, float] | None = None, cost_s: float | None = None,
            meta: Mapping[str, Any] | None = None) -> Sample:
    """Build the run's Sample; occupancies when U is known, or when no data moved."""
    U, raw = utilisation(m.cpu_s, m.T_s, m.cpus)
    D = m.data_bytes / MB
    info: dict[str, Any] = {**(meta or {}), "method": m.method, "cpu_s": m.cpu_s,
                            "U_raw": raw, "data_bytes": m.data_bytes, **m.extra}
    if D <= 0 and m.T_s > 0:  # no I/O: all of T is compute, one unit of work
        occ = occupancies_without_data(m.T_s)
        info.update(split="none", occupancies=f"no data flow: o_n = o_d = 0, the run is "
                    f"one unit of work (D = {NO_DATA_UNIT:g}, o_a = T)")
        return Sample(assignment=dict(assignment), T=m.T_s, D=occ.D, U=U, o_a=occ.o_a,
                      o_n=occ.o_n, o_d=occ.o_d, cost_s=cost_s, profile=dict(profile or {}),
                      meta=info)
    net, disk, split = split_io_time(m)
    info.update(split)
    if U is None or D <= 0:
        info["occupancies"] = "unavailable: " + ("no CPU time" if U is None else "no data flow")
        return Sample(assignment=dict(assignment), T=m.T_s, D=D if D > 0 else None, U=U,
                      cost_s=cost_s, profile=dict(profile or {}), meta=info)
    occ = occupancies(m.T_s, U, D, net, disk)
    return Sample(assignment=dict(assignment), T=m.T_s, D=D, U=U, o_a=occ.o_a, o_n=occ.o_n,
                  o_d=occ.o_d, cost_s=cost_s, profile=dict(profile or {}), meta=info)
