"""Pure tests: emulation specs build the right argv lists; nothing runs."""

from __future__ import annotations

import pytest

from workbench.emulation import CgroupSpec, NetworkSpec
from workbench.emulation.cgroups import ENTER_SCRIPT, Cgroup, CgroupLayout, parse_layout
from workbench.emulation.network import iptables_cmd, nfqueue_rule, queue_number
from workbench.errors import EmulationError
from workbench.lab.builder import plan_hosts
from workbench.storage.mount import nfs_argv, sshfs_argv


def test_rate_uses_tbf_on_the_interface():
    (cmd,) = NetworkSpec(rate_mbit=20).rate_cmds("data0")
    assert cmd[:9] == ["tc", "qdisc", "replace", "dev", "data0", "root", "handle", "4e49:",
                       "tbf"]
    assert cmd[cmd.index("rate") + 1] == "20000kbit"
    assert int(cmd[cmd.index("burst") + 1]) >= 32 * 1024
    # a queue no slow TCP start-up overflows (at least 1 MiB), 50 ms beyond the bucket when
    # that is more; never tbf's latency form
    assert int(cmd[cmd.index("limit") + 1]) == 1 << 20 and "latency" not in cmd
    (fast,) = NetworkSpec(rate_mbit=1000).rate_cmds("data0")
    burst = int(fast[fast.index("burst") + 1])
    assert burst == 500_000 and int(fast[fast.index("limit") + 1]) == burst + 6_250_000
    assert NetworkSpec(delay_ms=5).rate_cmds("data0") == []


def test_netem_sits_under_tbf_when_both_are_set():
    (alone,) = NetworkSpec(delay_ms=10).netem_cmds("eth1", 5.0)
    assert alone[alone.index("root") + 2] == "4e49:" and "netem" in alone
    assert alone[alone.index("delay") + 1] == "5.000ms"
    (under,) = NetworkSpec(delay_ms=10, rate_mbit=50).netem_cmds("eth1", 5.0)
    assert under[under.index("parent") + 1] == "4e49:1" and "root" not in under
    assert NetworkSpec().teardown_cmds("eth1") == [["tc", "qdisc", "del", "dev", "eth1", "root"]]


def test_nfqueue_rule_is_on_the_receiving_side_with_bypass():
    rule = nfqueue_rule("data0", "10.77.1.1", 1234, "nimo-r1.h")
    cmd = iptables_cmd("-A", rule)
    assert cmd[:7] == ["iptables", "-w", "5", "-t", "mangle", "-A", "PREROUTING"]
    assert rule[rule.index("-i") + 1] == "data0" and rule[rule.index("-s") + 1] == "10.77.1.1"
    assert rule[-3:] == ["--queue-num", "1234", "--queue-bypass"]
    assert rule[rule.index("--comment") + 1].startswith("nimo-")


def test_queue_numbers_are_deterministic_and_in_range():
    a = queue_number("nimo-r1.h", "data0")
    assert a == queue_number("nimo-r1.h", "data0")
    assert 1000 <= a < 61000
    assert a != queue_number("nimo-r2.h", "data0")


@pytest.mark.parametrize("kw", [{"delay_ms": -1}, {"rate_mbit": 0}, {"rate_mbit": -3}])
def test_network_spec_validates(kw):
    with pytest.raises(EmulationError):
        NetworkSpec(**kw)


def test_cpu_quota_from_share():
    assert CgroupSpec(cpus=0.5).quota_us() == 50_000
    assert CgroupSpec(cpus=2).quota_us() == 200_000
    assert CgroupSpec(cpus=0.001).quota_us() == 1000  # kernel minimum
    assert CgroupSpec().quota_us() is None
    assert CgroupSpec(memory_mb=64).memory_bytes() == 64 << 20


def test_v1_and_v2_writes():
    v1 = dict(CgroupSpec(cpus=0.25, memory_mb=100, weight=200).v1_writes(
        {"cpu": "/cg/cpu/n", "cpuacct": "/cg/cpuacct/n", "memory": "/cg/memory/n"}))
    assert v1["/cg/cpu/n/cpu.cfs_quota_us"] == "25000"
    assert v1["/cg/cpu/n/cpu.cfs_period_us"] == "100000"
    assert v1["/cg/cpu/n/cpu.shares"] == "2048"
    assert v1["/cg/memory/n/memory.limit_in_bytes"] == str(100 << 20)
    v2 = dict(CgroupSpec(cpus=1.5).v2_writes("/sys/fs/cgroup/n"))
    assert v2 == {"/sys/fs/cgroup/n/cpu.max": "150000 100000", "/sys/fs/cgroup/n/memory.max": "max"}


V1_TEXT = """tmpfs /sys/fs/cgroup tmpfs rw 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0
--- cgroup
4:memory:/process_api/abc
2:cpuacct:/
1:cpu:/
0::/
--- v2
/sys/fs/cgroup/unified hugetlb
"""
V2_TEXT = """cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0
--- cgroup
0::/user.slice/session-1.scope
--- v2
/sys/fs/cgroup cpuset cpu io memory pids
"""


def test_parse_layout_v1_uses_own_memory_cgroup():
    layout = parse_layout(V1_TEXT)
    assert layout.version == 1
    assert layout.parent_dirs()["memory"] == "/sys/fs/cgroup/memory/process_api/abc"
    assert layout.parent_dirs()["cpu"] == "/sys/fs/cgroup/cpu"


def test_parse_layout_prefers_v2_with_cpu_and_memory():
    layout = parse_layout(V2_TEXT)
    assert layout.version == 2 and layout.parent_dirs() == {"unified": "/sys/fs/cgroup"}


def test_parse_layout_without_controllers_fails():
    with pytest.raises(EmulationError):
        parse_layout("--- cgroup\n--- v2\n")


def test_cgroup_prefix_keeps_argv_out_of_the_script():
    cg = Cgroup.__new__(Cgroup)
    cg.paths = {"cpu": "/c/cpu/n", "memory": "/c/memory/n"}
    evil = "/tmp/x; touch /tmp/pwned"
    argv = cg.prefix(["cat", evil])
    assert argv[:5] == ["sh", "-c", ENTER_SCRIPT, "nimo-cg", "2"]
    assert argv[5:7] == ["/c/cpu/n/cgroup.procs", "/c/memory/n/cgroup.procs"]
    assert argv[7:] == ["cat", evil] and evil not in ENTER_SCRIPT


def test_sshfs_argv_is_readonly_and_strict():
    argv, opts = sshfs_argv("root@10.77.1.1:/srv", "/tmp/nimo-mnt-r.h",
                            identity_file="/k", known_hosts="/kh", port=22)
    assert argv[0] == "sshfs" and argv[-2:] == ["root@10.77.1.1:/srv", "/tmp/nimo-mnt-r.h"]
    o = opts.split(",")
    assert o[0] == "ro" and "StrictHostKeyChecking=yes" in o and "BatchMode=yes" in o
    assert "IdentityFile=/k" in o and "UserKnownHostsFile=/kh" in o
    with pytest.raises(EmulationError):
        sshfs_argv("s:/", "/m", identity_file="/a,b", known_hosts=None, port=22)
    assert nfs_argv("10.77.1.1:/nimo", "/m", 2050)[0][:5] == ["mount", "-t", "nfs4", "-o",
                                                         "ro,port=2050,proto=tcp,timeo=50,retrans=2"]


def test_lab_plan():
    hosts = plan_hosts(3, "nimo-", "10.77")
    assert [h.role for h in hosts] == ["storage", "compute", "compute"]
    assert [h.address for h in hosts] == ["10.77.0.11", "10.77.0.12", "10.77.0.13"]
    assert {h.peer for h in hosts[1:]} == {"storage1"}
    assert len({h.data_address for h in hosts}) == 3
    assert all(h.netns.startswith("nimo-") for h in hosts)
    CgroupLayout(1, {})  # constructible without a host


def test_dataset_mounted_mounts_verified_and_always_unmounts():
    from workbench.storage import dataset_mounted
    from workbench.testing import FakeHost

    compute, storage = FakeHost("c1"), FakeHost("s1")
    with pytest.raises(RuntimeError), dataset_mounted(
            compute, storage, "/srv/nimo", storage_address="10.9.1.12", run_id="r1",
            method="sshfs", ssh_port=2222) as record:
        assert record.method == "sshfs" and record.source == "root@10.9.1.12:/srv/nimo"
        assert compute.mounts == {record.mountpoint: "fuse.sshfs"}
        assert record.mountpoint == "/tmp/nimo-r1-mnt-000000.c1"  # private (mktemp -d)
        assert compute.private_dirs == [record.mountpoint]
        raise RuntimeError("G failed")
    assert compute.mounts == {} and compute.ran(["rmdir", record.mountpoint])
    assert storage.ran(["test", "-d", "/srv/nimo"])
