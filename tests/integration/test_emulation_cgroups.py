"""CPU quota and memory limits through cgroups on a lab host (real kernel, no fakes)."""

from __future__ import annotations

import pytest

from workbench.emulation import CgroupSpec, cgroup_applied, create_cgroup, detect_cgroups
from workbench.errors import EmulationError

pytestmark = pytest.mark.lab

# A fixed amount of CPU work (not time-based), ~1.5 s at full speed on the lab machine.
# It prints the CPU time its own process was charged (user + system, kept across the exec of
# the cgroup's entry shell), the yardstick for what the cgroup reports.
SPIN = ["python3", "-c", "import os\nx = 0\nfor i in range(15_000_000):\n    x += i * i\n"
        "t = os.times()\nprint(t.user + t.system)"]


def _timed(conn, spec: CgroupSpec, run_id: str) -> tuple[float, object, float]:
    """(wall s, the cgroup's usage, the CPU s the process itself was charged)."""
    with cgroup_applied(conn, spec, run_id=run_id) as cg:
        res = conn.run(cg.prefix(SPIN), timeout=60)
        return res.duration_s, cg.usage(), float(res.stdout.split()[-1])


def test_detects_cgroup_layout(compute):
    layout = detect_cgroups(compute)
    assert layout.version in (1, 2)
    if layout.version == 1:
        assert {"cpu", "cpuacct", "memory"} <= set(layout.mounts)


def test_half_cpu_share_doubles_cpu_bound_time(compute, assert_clean):
    # weight: the lab shares 2 CPUs with whatever else runs; the quota must be the limit.
    # "Its 100% time" is the time the work needs on a whole CPU, which is the CPU time the
    # cgroup charges for it. Wall time at 100% share is not a stable yardstick on a shared VM:
    # CI measured 1.36-2.15 s for the same work (CPU speed drift and time lost to neighbours),
    # and a 50% run absorbs such losses inside the half period it may not use anyway.
    fulls, halves = [], []
    for i in range(5):
        fulls.append(_timed(compute, CgroupSpec(cpus=1.0, weight=10_000), f"full{i}"))
        halves.append(_timed(compute, CgroupSpec(cpus=0.5, weight=10_000), f"half{i}"))
    slowdowns = sorted(wall / usage.cpu_s for wall, usage, _ in halves)
    slowdown = slowdowns[len(slowdowns) // 2]
    print(f"CPU-bound: 100% wall {[round(w, 3) for w, _, _ in fulls]} s, cgroup cpu "
          f"{[round(u.cpu_s, 3) for _, u, _ in fulls]} s, own cpu "
          f"{[round(c, 3) for _, _, c in fulls]} s; 50% wall {[round(w, 3) for w, _, _ in halves]}"
          f" s, cgroup cpu {[round(u.cpu_s, 3) for _, u, _ in halves]} s, own cpu "
          f"{[round(c, 3) for _, _, c in halves]} s; 50% wall / cgroup CPU time "
          f"{[round(r, 2) for r in slowdowns]} (median {slowdown:.2f})")
    assert 1.8 <= slowdown <= 2.2
    assert all(usage.nr_throttled > 0 for _, usage, _ in halves)
    # at 100% share the quota never binds: the run gets a whole CPU whenever it is runnable
    assert all(usage.throttled_s < 0.05 * wall for wall, usage, _ in fulls)
    # The cgroup charges the process's CPU time (not its wall time, not the time it was
    # throttled), run by run at either share. Checked against the CPU time the process itself
    # was charged rather than across shares: CI once measured the same work at 2.05 s of CPU
    # at 50% against 1.51 s at 100% (a core that idles half of each period runs its other half
    # slower on a shared VM), a property of the machine, not of the accounting.
    for _, usage, own_cpu_s in fulls + halves:
        assert usage.cpu_s == pytest.approx(own_cpu_s, rel=0.1, abs=0.05)
    assert_clean(compute)


def test_limits_are_read_back_and_removed(compute, assert_clean):
    with cgroup_applied(compute, CgroupSpec(cpus=0.25, memory_mb=64), run_id="rb") as cg:
        files = {k: compute.run(["ls", p]).stdout for k, p in cg.paths.items()}
        assert all(files.values())
        if cg.layout.version == 1:
            assert compute.run(["cat", f"{cg.paths['cpu']}/cpu.cfs_quota_us"]).stdout == "25000\n"
            limit = int(compute.run(["cat", f"{cg.paths['memory']}/memory.limit_in_bytes"]).stdout)
            assert limit == 64 * 1024 * 1024
        else:
            assert compute.run(["cat", f"{cg.paths['unified']}/cpu.max"]).stdout.startswith(
                "25000 ")
        # a member process is killed on teardown
        sleeper = compute.start(cg.prefix(["sleep", "60"]))
    assert_clean(compute)
    # the PID namespace is the machine's: look for our process, not for any "sleep 60"
    assert not compute.run(["kill", "-0", str(sleeper.pid)], check=False).ok


def test_memory_limit_oom_kills(compute, assert_clean):
    hog = ["python3", "-c", "b = []\nfor i in range(8):\n    b.append(bytearray(50 << 20))"]
    with cgroup_applied(compute, CgroupSpec(memory_mb=100), run_id="oom") as cg:
        res = compute.run(cg.prefix(hog), check=False, timeout=60)
        usage = cg.usage()
    assert res.exit_code in (137, -1)
    assert usage.oom_kills >= 1
    assert_clean(compute)


def test_bad_spec_is_rejected():
    with pytest.raises(EmulationError):
        CgroupSpec(cpus=0)
    with pytest.raises(EmulationError):
        CgroupSpec(memory_mb=-5)


def test_create_then_remove_is_idempotent(compute, assert_clean):
    cg = create_cgroup(compute, CgroupSpec(cpus=2), run_id="idem")
    cg.remove()
    cg.remove()
    assert_clean(compute)
