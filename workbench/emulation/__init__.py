"""Resource emulation: network shaping (tc / netem / NFQUEUE delayer) and cgroup CPU/memory limits.

Specs are pure data that build argv lists; they are applied in one place, verified by reading
back, and always torn down (context managers). Every name carries the ``nimo-`` prefix so
``workbench.clean`` can sweep leftovers.

Public API (stable)::

    NetworkSpec(delay_ms=0.0, rate_mbit=None)   # delay_ms = added ROUND-TRIP time on the link
      .rate_cmds(iface) / .netem_cmds(iface, delay_ms) / .teardown_cmds(iface)   -> list[argv]
    LinkEnd(conn, iface, peer_address)          # one end of a data link, reached over SSH
    network_applied(ends, spec, *, run_id, python="python3") -> ctx manager yielding NetworkRecord
    apply_network(ends, spec, *, run_id, python="python3") -> AppliedNetwork  # .record, .teardown()
    NetworkRecord(spec, ends: tuple[EndRecord, ...], apply_s, teardown_s)
    EndRecord(host, iface, delay_method: "none"|"netem"|"nfqueue", delay_ms, rate_mbit, queue_num)

    CgroupSpec(cpus=None, memory_mb=None, period_us=100_000, weight=None)  # cpus=0.5: half a CPU
      .quota_us() -> int | None ; .memory_bytes() -> int | None
    detect_cgroups(conn) -> CgroupLayout(version: 1|2, mounts, own)
    create_cgroup(conn, spec, *, run_id) -> Cgroup
    cgroup_applied(conn, spec, *, run_id) -> ctx manager yielding Cgroup
    Cgroup: .name, .paths, .layout, .prefix(argv) -> list[str], .usage() -> CgroupUsage,
            .remove()
    CgroupUsage(cpu_s, nr_periods, nr_throttled, throttled_s, oom_kills, memory_peak_bytes)

    scope_name(conn, run_id) -> "nimo-<run_id>.<hosttoken>"  # per-host unique resource name

Host safety (``hostobjects``, ``datapath``): every directory a run makes is a private
``mktemp -d`` named after campaign and run, every object is recorded in the host's marker
before it is made (``workbench.clean`` removes only those), and shaping is refused on the
SSH (management) interface or over a root qdisc nimo did not install.

Delay semantics: ``delay_ms`` is the round-trip time added between the ends; each of the two
ends adds ``delay_ms / 2`` (netem on its egress where the kernel has netem, otherwise an
NFQUEUE delayer on its ingress), so ``ping`` across the link shows ``delay_ms`` more RTT.
Rate: a tbf on each end's egress, so each direction is capped at ``rate_mbit``.
"""

from workbench.emulation.cgroups import (
    Cgroup,
    CgroupLayout,
    CgroupSpec,
    CgroupUsage,
    cgroup_applied,
    create_cgroup,
    detect_cgroups,
)
from workbench.emulation.common import scope_name
from workbench.emulation.network import (
    AppliedNetwork,
    EndRecord,
    LinkEnd,
    NetworkRecord,
    NetworkSpec,
    apply_network,
    network_applied,
)

__all__ = [
    "AppliedNetwork",
    "Cgroup",
    "CgroupLayout",
    "CgroupSpec",
    "CgroupUsage",
    "EndRecord",
    "LinkEnd",
    "NetworkRecord",
    "NetworkSpec",
    "apply_network",
    "cgroup_applied",
    "create_cgroup",
    "detect_cgroups",
    "network_applied",
    "scope_name",
]
