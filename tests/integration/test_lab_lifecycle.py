"""The namespace lab: hosts reachable over SSH with strict host keys, isolated, and removable
without a trace."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest

from workbench.inventory import load_inventory
from workbench.lab import Lab
from workbench.lab.netns import netns_list
from workbench.processes import pid_alive

pytestmark = pytest.mark.lab


def test_lab_hosts_are_reachable_and_named(lab):
    assert [h.role for h in lab.hosts].count("storage") == 1
    assert [h.role for h in lab.hosts].count("compute") == 2
    for h in lab.hosts:
        with lab.connect(h.name) as conn:
            assert conn.run(["hostname"]).stdout.strip() == h.hostname
            routes = conn.run(["ip", "route", "show", "default"]).stdout
            assert routes.strip() == "", f"{h.name} has a default route: {routes}"


def test_data_path_links_compute_to_storage(lab):
    storage = lab.host("storage1")
    for h in lab.hosts:
        if h.role != "compute":
            continue
        with lab.connect(h.name) as conn:
            res = conn.run(["ping", "-c", "1", "-W", "2", storage.data_address])
            assert "1 received" in res.stdout
            route = conn.run(["ip", "route", "get", storage.data_address]).stdout
            assert f"dev {h.data_iface}" in route


def test_cgroups_visible_inside_hosts(lab, compute):
    # ip netns exec hides /sys/fs/cgroup unless the lab re-mounts it
    out = compute.run(["ls", "/sys/fs/cgroup"]).stdout.split()
    assert "cpu" in out or "cgroup.controllers" in out


def test_inventory_written_in_project_format(lab):
    inv = load_inventory(lab.inventory_path)
    assert {h.name for h in inv.hosts} == {h.name for h in lab.hosts}
    for h in inv.hosts:
        assert Path(h.key_file) == lab.key_file
        assert Path(h.known_hosts) == lab.known_hosts
        if h.role == "compute":
            assert h.peer == "storage1"


def test_up_down_cycles_leave_nothing(tmp_path, lab_slot):
    prefix, base = lab_slot
    for _ in range(2):
        lab = Lab(tmp_path / "small", hosts=2, prefix=prefix, subnet_base=base)
        t0 = time.monotonic()
        lab.up()
        up_s = time.monotonic() - t0
        pids = dict(lab.sshd_pids)
        with lab.connect("compute1") as conn:
            conn.run(["true"])
        removed = lab.down()
        print(f"lab of 2 hosts: up {up_s:.2f} s, down {removed['down_s']:.2f} s")
        assert up_s < 5 and removed["down_s"] < 5
        assert not [ns for ns in netns_list() if ns.startswith(prefix)]
        assert not Path(f"/sys/class/net/{prefix}br0").exists()
        assert not any(Path("/etc/netns", f"{prefix}{h.name}").exists() for h in lab.hosts)
        assert not any(pid_alive(p) for p in pids.values())
        assert not (tmp_path / "small" / "lab.json").exists()
    again = Lab(tmp_path / "small", hosts=2, prefix=prefix, subnet_base=base).down()
    assert again["netns"] == [] and again["pids"] == []


def test_down_removes_what_a_killed_campaign_left_on_its_hosts(tmp_path, lab_slot):
    """A campaign killed mid-run leaves its dirs (a mount inside one) and its markers on the
    hosts; the lab going down removes them (they are named after its hosts) and nothing
    named after another host."""
    from workbench.emulation.hostobjects import marker_file, private_dir

    prefix, base = lab_slot
    lab = Lab(tmp_path / "killed", hosts=2, prefix=prefix, subnet_base=base)
    lab.up()
    other = Path(tempfile.mkdtemp(prefix="nimo-keep-", suffix=".another-host", dir="/tmp"))
    try:
        with lab.connect("compute1") as conn:
            work = private_dir(conn, "c1234abcd-r1-0-beef", "work")
            marker = marker_file(conn, "c1234abcd-r1-0-beef")
            conn.run(["mkdir", f"{work}/mnt"])
            conn.run(["mount", "-t", "tmpfs", "nimo-test", f"{work}/mnt"])
        assert Path(work).is_dir() and Path(marker).is_file()
        removed = lab.down()
        assert work in removed["dirs"] and marker in removed["markers"]
        assert not Path(work).exists() and not Path(marker).exists()
        assert f"{work}/mnt" not in Path("/proc/self/mounts").read_text()
        assert other.is_dir()
    finally:
        lab.down()
        other.rmdir()
