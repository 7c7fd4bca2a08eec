"""CPU quota and memory limits through cgroups on a lab host (real kernel, no fakes)."""

from __future__ import annotations

import pytest

from workbench.emulation import CgroupSpec, cgroup_applied, create_cgroup, detect_cgroups
from workbench.exceptions import EmulationError

pytestmark = pytest.mark.lab

# A fixed amount of CPU work (not time-based), ~1.5 s at full speed on the lab machine.
SPIN = ["python3", "-c", "x = 0\nfor i in range(15_000_000):\n    x += i * i"]


def _timed(conn, spec: CgroupSpec, run_id: str) -> tuple[float, object]:
    with cgroup_applied(conn, spec, run_id=run_id) as cg:
        res = conn.run(cg.prefix(SPIN), timeout=60)
        return res.duration_s, cg.usage()


def test_detects_cgroup_layout(compute):
    layout = detect_cgroups(compute)
    assert layout.version in (1, 2)
    if layout.version == 1:
        assert {"cpu", "cpuacct", "memory"} <= set(layout.mounts)


def test_half_cpu_share_doubles_cpu_bound_time(compute, assert_clean):
    # weight: the lab shares 2 CPUs with whatever else runs; the quota must be the limit.
    # The VM's CPU speed drifts by ~10% between runs, so each 50% run is compared with the
    # 100% run just before it, and the median of those ratios is the slowdown.
    fulls, runs = [], []
    for i in range(5):
        fulls.append(_timed(compute, CgroupSpec(cpus=1.0, weight=10_000), f"full{i}")[0])
        runs.append(_timed(compute, CgroupSpec(cpus=0.5, weight=10_000), f"half{i}"))
    ratios = sorted(h / f for f, (h, _) in zip(fulls, runs, strict=True))
    ratio = ratios[len(ratios) // 2]
    full = min(fulls)
    usage = runs[0][1]
    print(f"CPU-bound: 100% {[round(f, 3) for f in fulls]} s, 50% "
          f"{[round(h, 3) for h, _ in runs]} s, pair ratios {[round(r, 2) for r in ratios]}, "
          f"median {ratio:.2f}; usage {usage}")
    assert 1.8 <= ratio <= 2.2
    assert usage.nr_throttled > 0
    assert usage.cpu_s == pytest.approx(full, rel=0.35)  # CPU time ~ work, not wall time
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
        compute.start(cg.prefix(["sleep", "60"]))
    assert_clean(compute)
    assert "sleep 60" not in compute.run(["ps", "-eo", "args"]).stdout


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
