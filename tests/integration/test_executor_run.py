"""SSHRunner on the namespace lab: full runs with real tools produce sane samples and leave
nothing behind; independent runs go concurrently on the two compute hosts."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest
import yaml
from conftest import lab_inventory

import workbench.executor.attempt as attempt_module
from nimo.records import RunRequest, RunStatus
from nimo.runner import Runner
from workbench.executor import SSHRunner, open_runner

pytestmark = [pytest.mark.lab, pytest.mark.slow]


@pytest.fixture
def compress_runner(lab, tmp_path):
    runner = open_runner(lab_inventory(lab, tmp_path, "compress", 8))
    yield runner
    runner.close()


def test_runner_protocol_and_space(compress_runner):
    assert isinstance(compress_runner, Runner)
    assert compress_runner.space.names == ("cpu_share", "memory_mb", "delay_ms", "rate_mbit")


def test_cpu_bound_run_gives_sane_t_u_d(compress_runner, lab, compute, storage, assert_clean):
    a = {"cpu_share": 0.5, "memory_mb": 256, "delay_ms": 2, "rate_mbit": 100}
    out = compress_runner.run(RunRequest(1, a, "train"))
    assert out.status is RunStatus.DONE, out.reason
    s = out.sample
    assert 1.0 < s.T < 30
    assert 0.7 <= s.U <= 1.0  # CPU-bound: busy most of the half CPU it was given
    assert 8 * 1.048576 <= s.D < 8 * 1.048576 * 1.3  # dataset + protocol overhead, MB
    assert s.D * (s.o_a + s.o_n + s.o_d) == pytest.approx(s.T)
    assert s.o_a > s.o_n + s.o_d
    assert s.meta["nr_throttled"] > 0 and s.meta["mount"] == "sshfs"
    assert s.meta["split"] == "estimate" and "split_method" in s.meta
    assert s.meta["app_output"]["bytes_in"] == pytest.approx(8 * 2**20, rel=0.01)
    assert 0.2 < s.profile["cpu_speed"] < 0.7  # ~ the 0.5 CPU quota
    assert 1.0 < s.profile["rtt_ms"] < 10  # 2 ms emulated round trip
    assert 40 < s.profile["bandwidth_mbit"] < 110
    profile_s = s.meta["timing"]["profile_measure_s"]  # reported apart from the overhead
    assert s.cost_s > s.T and out.overhead_s == pytest.approx(s.cost_s - s.T - profile_s)
    compress_runner.close()  # the runner's private app dirs go with it
    assert_clean(compute)
    assert_clean(storage)


def test_io_bound_run_is_network_dominated(lab, tmp_path, compute, storage, assert_clean):
    with open_runner(lab_inventory(lab, tmp_path, "checksum", 8)) as runner:
        a = {"cpu_share": 1.0, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 20}
        out = runner.run(RunRequest(2, a, "train"))
    assert out.status is RunStatus.DONE, out.reason
    s = out.sample
    assert 8 * 8 * 1.048576 / 20 * 0.8 < s.T < 30  # ~3.4 s at 20 Mbit/s
    assert s.U < 0.3 and s.o_n > 3 * s.o_a
    assert 8 * 1.048576 <= s.D < 8 * 1.048576 * 1.3
    assert 15 < s.profile["bandwidth_mbit"] < 22
    assert_clean(compute)
    assert_clean(storage)


def test_a_delayed_link_carries_its_rate_from_the_first_byte(lab, tmp_path, compute, storage,
                                                              assert_clean):
    """The link is emulated before the mount connects: a connection opened on the bare link
    kept its microsecond RTT (BBR's minimum, 10 s) and read at half the rate or less."""
    with open_runner(lab_inventory(lab, tmp_path, "checksum", 16)) as runner:
        a = {"cpu_share": 0.25, "memory_mb": 256, "delay_ms": 10, "rate_mbit": 50}
        out = runner.run(RunRequest(3, a, "train"))
    assert out.status is RunStatus.DONE, out.reason
    s = out.sample
    mbit = s.meta["app_output"]["bytes_in"] * 8 / 1e6 / s.T
    print(f"16 MB over 10 ms and 50 Mbit/s: T {s.T:.2f} s, {mbit:.1f} Mbit/s")
    assert 0.7 * 50 < mbit < 50
    assert_clean(compute)
    assert_clean(storage)


def test_profile_is_cached_per_assignment(compress_runner):
    a = {"cpu_share": 1.0, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 400}
    first = compress_runner.run(RunRequest(3, a, "train"))
    second = compress_runner.run(RunRequest(4, a, "train"))
    assert first.ok and second.ok, (first.reason, second.reason)
    assert first.sample.profile == second.sample.profile
    assert first.sample.meta["timing"]["profile_s"] > 0.2
    assert second.sample.meta["timing"]["profile_s"] < 0.05
    assert second.sample.cost_s - second.sample.T < first.sample.cost_s - first.sample.T
    assert second.overhead_s == pytest.approx(second.sample.cost_s - second.sample.T)


def _runner_with_missing_workdir(lab, tmp_path: Path) -> tuple[SSHRunner, Path]:
    """A compress runner whose work dirs' parent is missing, two levels deep."""
    parent = Path(f"/tmp/nimo-test-{secrets.token_hex(4)}/work")
    path = Path(lab_inventory(lab, tmp_path, "compress", 8))
    doc = yaml.safe_load(path.read_text())
    doc["application"]["workdir"] = str(parent)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return open_runner(str(path)), parent


def test_run_many_uses_both_compute_hosts_concurrently(lab, tmp_path, assert_clean):
    """Two runs overlap on the two compute hosts; their work dirs' parent (missing, two
    levels deep) is made for them and removed with the runner, with everything else."""
    runner, parent = _runner_with_missing_workdir(lab, tmp_path)
    a = {"cpu_share": 0.25, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 400}
    b = {"cpu_share": 0.25, "memory_mb": 96, "delay_ms": 0, "rate_mbit": 400}
    seen = []
    t0 = time.monotonic()
    try:
        outs = runner.run_many([RunRequest(5, a, "train"), RunRequest(6, b, "train")],
                               seen.append)
    finally:
        runner.close()  # the runner's private app dirs and the parents it made go with it
    wall = time.monotonic() - t0
    assert [o.request.run for o in outs] == [5, 6]
    assert all(o.ok for o in outs), [o.reason for o in outs]
    assert {o.host for o in outs} == {"compute1", "compute2"}
    assert len(seen) == 2
    assert wall < sum(o.sample.cost_s for o in outs) * 0.85  # they overlapped
    assert not parent.parent.exists()
    for name in ("compute1", "compute2", "storage1"):
        with lab.connect(name) as conn:
            for iface in (["data0", "data1"] if name == "storage1" else ["data0"]):
                assert_clean(conn, iface)


def test_a_work_dir_parent_removed_between_runs_is_made_again_and_removed(lab, tmp_path):
    """Another campaign ending removes the (empty) parent between two runs: the next run
    makes it again, records it, and removes it with its work dir."""
    runner, parent = _runner_with_missing_workdir(lab, tmp_path)
    a = {"cpu_share": 1.0, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 400}
    try:
        assert runner.run(RunRequest(1, a, "train")).ok
        assert parent.is_dir()  # made once for the runner
        parent.rmdir()
        assert runner.run(RunRequest(2, a, "train")).ok
        assert not parent.exists()
    finally:
        runner.close()
    assert not parent.parent.exists()


def test_a_work_dir_parent_removed_just_before_the_mktemp_is_made_again(lab, tmp_path,
                                                                        monkeypatch):
    """The narrow race: another campaign removes the (empty) parent after this run checked
    it and before its mktemp. The run makes it again and succeeds; nothing is left."""
    runner, parent = _runner_with_missing_workdir(lab, tmp_path)
    real = attempt_module.private_dir
    raced = []

    def racing_private_dir(conn, run_id, role, *args, **kwargs):
        if role == "work" and not raced:
            raced.append(run_id)
            parent.rmdir()  # what the other campaign's close does
        return real(conn, run_id, role, *args, **kwargs)

    monkeypatch.setattr(attempt_module, "private_dir", racing_private_dir)
    a = {"cpu_share": 1.0, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 400}
    try:
        out = runner.run(RunRequest(1, a, "train"))
        assert raced and out.ok, out.reason
    finally:
        runner.close()
    assert not parent.parent.exists()


def test_holdout_picks_unused_assignments(compress_runner):
    used = compress_runner.space.candidates[:5]
    picks = compress_runner.holdout(10, exclude=used, seed=3)
    assert len(picks) == 10 and len({tuple(p.values()) for p in picks}) == 10
    assert not {compress_runner.space.from_dict(p) for p in picks} & set(used)
    assert picks == compress_runner.holdout(10, exclude=used, seed=3)


def test_memory_sensitive_scan_jumps_below_its_working_set(lab, tmp_path, compute,
                                                          assert_clean):
    """64 MB scanned 4 times: with 256 MB the passes after the first hit the page cache;
    with 48 MB every pass fetches the data again, so T and D both jump (~4x)."""
    path = lab_inventory(lab, tmp_path, "scan", 64,
                         monitors={"sar": False, "tshark": False, "profile": False})
    with open_runner(path) as runner:
        big, small = (runner.run(RunRequest(10 + i, {"cpu_share": 1.0, "memory_mb": mem,
                                                     "delay_ms": 0, "rate_mbit": 400}, "train"))
                      for i, mem in enumerate((256, 48)))
    assert big.ok and small.ok, (big.reason, small.reason)
    assert 64 * 1.048 < big.sample.D < 64 * 1.048 * 1.3
    assert small.sample.D > 3 * big.sample.D
    assert small.sample.T > 2 * big.sample.T
    assert small.sample.meta["memory_peak_mb"] <= 48.5
    assert_clean(compute)
