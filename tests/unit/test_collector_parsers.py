"""Parsers of real monitor output (fixtures captured with the real tools, see the README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.collector import (
    parse_ack_rtt,
    parse_io_stat,
    parse_rpc_srt,
    parse_sadf_json,
    parse_sysfs_counters,
    rtt_from,
)
from workbench.emulation import CgroupSpec
from workbench.emulation.cgroups import Cgroup, CgroupLayout
from workbench.errors import ParseError, ProfileError
from workbench.profiles import parse_json_line, parse_ping
from workbench.testing import FakeHost

FX = Path(__file__).resolve().parents[1] / "fixtures" / "collector"


def fx(name: str) -> str:
    return (FX / name).read_text()


def test_sadf_local_summary():
    s = parse_sadf_json(fx("sadf_local.json"), "sadf_local.json")
    assert s.ncpu == 2 and s.samples == 3 and s.interval_s == 1
    # one busy core of two: user ~48-50 %
    assert 40 < s.cpu_busy_pct < 60
    vda = s.disks["vda"]
    assert vda.read_kb == pytest.approx(8.0 + 12.0)  # rkB/s x 1 s over the two non-idle samples
    assert vda.await_ms == pytest.approx((2.0 * 0.0 + 6.0 * 0.33) / 8.0)  # weighted by I/Os
    assert set(s.net_kb) == {"lo", "ifb0", "ifb1", "eth0"}
    assert s.mem_avail_min_kb and s.mem_avail_min_kb > 1e6


def test_sadf_lab_compute_sees_the_data_interface():
    s = parse_sadf_json(fx("sadf_lab_compute.json"))
    assert "data0" in s.net_kb
    rx, tx = s.net_kb["data0"]
    assert rx > 10_000 > tx  # ~16 MB read over sshfs, small requests out
    assert s.to_dict()["net_kb"]["data0"][0] == round(rx, 1)


def test_sadf_errors_name_source_and_line():
    with pytest.raises(ParseError, match=r"^x\.json:2: not sadf JSON"):
        parse_sadf_json('{"sysstat":\n  nope}', "x.json")
    with pytest.raises(ParseError, match="unexpected sadf JSON layout"):
        parse_sadf_json('{"sysstat": {"hosts": []}}', "y.json")


def _cgroup_files(layout: CgroupLayout, files: dict[str, str]) -> Cgroup:
    """A run cgroup on a fake host whose cgroup files hold ``files`` (name -> text)."""
    conn = FakeHost("c1")
    cg = Cgroup(conn, "nimo-r1.c1", layout, CgroupSpec())
    for name, text in files.items():
        controller = "unified" if layout.version == 2 else name.split(".")[0]
        conn.files[f"{cg.paths[controller]}/{name}"] = text
    return cg


def test_cgroup_v1_usage_from_real_files():
    layout = CgroupLayout(1, {c: f"/sys/fs/cgroup/{c}" for c in ("cpu", "cpuacct", "memory")})
    cg = _cgroup_files(layout, {"cpu.stat": fx("cgroup_v1_cpu.stat"),
                                "cpuacct.usage": fx("cgroup_v1_cpuacct.usage"),
                                "memory.oom_control": "oom_kill_disable 0\noom_kill 2\n",
                                "memory.max_usage_in_bytes": "1048576\n"})
    u = cg.usage()
    assert u.cpu_s == pytest.approx(0.5956077)  # ~half of the 1 s loop at a 50 % quota
    assert u.nr_periods == 12 and u.nr_throttled == 11
    assert u.throttled_s == pytest.approx(0.509323577)
    assert u.oom_kills == 2 and u.memory_peak_bytes == 1048576


def test_cgroup_v2_usage_from_real_files():
    cg = _cgroup_files(CgroupLayout(2, {"unified": "/sys/fs/cgroup"}),
                       {"cpu.stat": fx("cgroup_v2_cpu.stat"), "memory.events": "oom_kill 0\n"})
    u = cg.usage()
    assert u.cpu_s == pytest.approx(132.597379)
    assert u.nr_throttled == 0 and u.oom_kills == 0 and u.memory_peak_bytes is None


def test_sysfs_counters():
    c = parse_sysfs_counters("100\n20\n3\n4\n")
    d = parse_sysfs_counters("1100\n520\n13\n9\n") - c
    assert (d.rx_bytes, d.tx_bytes, d.total_bytes, d.rx_packets) == (1000, 500, 1500, 10)
    with pytest.raises(ParseError, match=r"stats:2: tx_bytes is not an integer"):
        parse_sysfs_counters("1\nx\n3\n4\n", "stats")
    with pytest.raises(ParseError, match="expected 4 counters, got 2"):
        parse_sysfs_counters("1\n2\n", "stats")


def test_rpc_srt_nfs3():
    rows = parse_rpc_srt(fx("tshark_rpc_srt_nfs3.txt"))
    assert set(rows) == {"NULL", "GETATTR", "LOOKUP", "ACCESS", "READ", "FSINFO"}
    read = rows["READ"]
    assert read.calls == 4 and read.avg_s == pytest.approx(0.000952)
    assert read.sum_s == pytest.approx(0.003810)
    # same numbers when the block comes after field lines and io,stat (one-pass form)
    assert parse_rpc_srt(fx("tshark_combined_nfs3.txt"))["READ"] == read


def test_io_stat_columns():
    rows = parse_io_stat(fx("tshark_io_stat.txt"))
    assert len(rows) == 1 and rows[0].frames == (226,) and rows[0].bytes == (7166590,)
    two = parse_io_stat(fx("tshark_combined_nfs3.txt"))[0]
    assert two.frames == (146, 20) and two.bytes == (7159206, 3392)
    assert parse_io_stat(fx("tshark_empty_capture.txt")) == []  # no packets at all
    lab = parse_io_stat(fx("tshark_sshfs_lab.txt"))[0]
    assert lab.frames == (224, 3864) and lab.bytes[1] > 16e6  # 16 MB back from storage


def test_ack_rtt_over_the_delayed_lab_link():
    per = parse_ack_rtt(fx("tshark_sshfs_lab.txt"))
    storage = rtt_from(per, "10.78.1.1")
    assert storage is not None and storage.count > 10
    assert 0.001 < storage.median_s < 0.05  # a few ms of emulated delay
    assert rtt_from(per, "10.9.9.9") is None


def test_tshark_errors_name_source_and_line():
    with pytest.raises(ParseError, match="no 'RPC SRT Statistics' block"):
        parse_rpc_srt("nothing", "t.txt")
    bad = "RPC SRT Statistics:\nFilter: x\nIndex  Procedure\n    6  READ  four\n"
    with pytest.raises(ParseError, match=r"^t\.txt:4: unexpected rpc,srt row"):
        parse_rpc_srt(bad, "t.txt")
    with pytest.raises(ParseError, match=r"^f:1: expected 3 tab-separated fields"):
        parse_ack_rtt("a\tb\n", "f")
    with pytest.raises(ParseError, match="no 'IO Statistics' block"):
        parse_io_stat("", "io")


def test_ping_and_benchmark_lines():
    assert parse_ping(fx("ping_q.txt"))["avg"] == pytest.approx(0.080)
    assert parse_ping(fx("ping_lab_delay4.txt"))["avg"] > 2.0
    with pytest.raises(ProfileError, match="no 'rtt min/avg/max/mdev'"):
        parse_ping("100% packet loss")
    assert parse_json_line('noise\n{"loops": 3, "seconds": 0.5}\n', ("loops", "seconds"), "b") \
        == {"loops": 3.0, "seconds": 0.5}
    with pytest.raises(ProfileError, match="expected a JSON line with loops"):
        parse_json_line("Traceback", ("loops",), "b")
