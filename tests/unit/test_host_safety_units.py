"""Host safety, pure parts and fake hosts: private dirs, markers, the management interface,
/proc/mounts escapes, and `clean` touching only recorded objects (lab tests:
tests/integration/test_host_safety.py)."""

from __future__ import annotations

import pytest

from workbench.clean import clean
from workbench.emulation.datapath import check_shapeable, parse_management
from workbench.emulation.hostobjects import (
    campaign_token,
    check_path_chars,
    parent_problems,
    private_dir,
    record,
)
from workbench.errors import EmulationError
from workbench.storage.mount import proc_mounts
from workbench.testing import FakeHost


def test_proc_mounts_escapes_are_decoded():
    text = ("sshfs#x /tmp/a\\040b\\011c\\012d\\134e fuse.sshfs ro 0 0\n"
            "root@10.0.0.2:/srv /tmp/plain fuse.sshfs ro 0 0\n")
    assert proc_mounts(text) == [("sshfs#x", "/tmp/a b\tc\nd\\e", "fuse.sshfs"),
                                 ("root@10.0.0.2:/srv", "/tmp/plain", "fuse.sshfs")]


def test_paths_with_backslash_tab_or_newline_are_refused_in_one_line():
    for bad in ("/tmp/a\\b", "/tmp/a\tb", "/tmp/a\nb"):
        with pytest.raises(EmulationError, match=r"^c1: storage.mountpoint .* backslash"):
            check_path_chars(FakeHost("c1"), bad, "storage.mountpoint")


def test_parent_chain_must_be_unchangeable_by_others():
    ok = ["/|0|755|directory", "/tmp|0|1777|directory", "/tmp/w|0|700|directory"]
    assert parent_problems(0, ok) is None
    assert parent_problems(0, ok[:2] + ["/tmp/w|4242|700|directory"]) == \
        "/tmp/w is owned by uid 4242"
    assert parent_problems(0, ok[:2] + ["/tmp/w|0|777|directory"]) == \
        "/tmp/w is writable by others (mode 777)"
    assert parent_problems(0, ok[:2] + ["/tmp/w|0|777|symbolic link"]) == \
        "/tmp/w is a symbolic link, not a directory"
    assert parent_problems(1000, ok[:2] + ["/tmp/w|1000|700|directory"]) is None


def test_management_interfaces_from_route_and_address():
    text = ("10.77.0.1 dev mgmt0 src 10.77.0.11 uid 0 \\    cache\n#\n"
            "2: mgmt0@if5    inet 10.77.0.11/24 brd 10.77.0.255 scope global mgmt0\n")
    assert parse_management(text) == {"mgmt0"}


def test_shaping_the_ssh_interface_or_a_foreign_qdisc_is_refused():
    host = FakeHost("s1")
    with pytest.raises(EmulationError, match=r"^s1: refusing to shape eth0: it carries the SSH"):
        check_shapeable(host, "eth0")
    host.on(["tc", "-j", "qdisc", "show", "dev", "data1", "root"],
            '[{"kind":"htb","handle":"1:","root":true}]')
    with pytest.raises(EmulationError, match=r"^s1: refusing to shape data1: .* root htb"):
        check_shapeable(host, "data1")
    host.on(["tc", "-j", "qdisc", "show", "dev", "data1", "root"],
            '[{"kind":"tbf","handle":"4e49:","root":true}]')
    check_shapeable(host, "data1")  # nimo's own (a leftover) may be replaced


def test_private_dirs_are_made_with_mktemp_and_named_after_campaign_and_run():
    host = FakeHost("c1")
    run_id = f"{campaign_token('exp 1')}-r3-0-ab12"
    path = private_dir(host, run_id, "work")
    assert path == f"/tmp/nimo-{run_id}-work-000000.c1"
    (cmd,) = host.ran(lambda argv: argv[3:4] == ("nimo-mktemp",))
    assert "mktemp -d" in cmd[2] and cmd[4] == f"/root/.nimo-objects/{run_id}.c1"
    assert campaign_token("exp 1") != campaign_token("exp 2") and campaign_token("") == "c0"


def test_clean_removes_only_recorded_objects_of_the_campaign():
    host = FakeHost("c1")
    mine, other = campaign_token("mine"), campaign_token("other")
    markers = {f"/root/.nimo-objects/{mine}-r1-0-aaaa.c1":
               "dir\t/tmp/nimo-x-mon-1.c1\nqdisc\tdata0\nrule\tnimo-x.c1\n",
               f"/root/.nimo-objects/{other}-r1-0-bbbb.c1": "dir\t/tmp/nimo-y-mon-2.c1\n"}
    host.on(lambda argv: argv[3:4] == ("nimo-markers",),
            call=lambda argv: "".join(f + "\n" for f in markers if f"/{argv[5]}" in f))
    host.on(lambda argv: argv[0] == "cat" and argv[1] == "--",
            call=lambda argv: "".join(markers[f] for f in argv[2:]))
    host.on(["tc", "-j", "qdisc", "show", "dev", "data0", "root"],
            '[{"kind":"htb","handle":"1:","root":true}]')  # the admin's, not ours
    host.on(lambda argv: argv[3:4] == ("nimo-ls",), call=lambda argv: "".join(
        d + "\n" for d in argv[4:]))
    report = clean(host, campaign="mine")
    assert report.dirs == ["/tmp/nimo-x-mon-1.c1"] and report.qdiscs == []
    assert not host.ran(["tc", "qdisc", "del", "dev", "data0", "root"])
    (kill,) = host.ran(lambda argv: argv[3:4] == ("nimo-kill",))
    assert kill[4] == "/tmp/nimo-x-mon-1.c1/"  # processes writing there end at once
    assert host.ran(["rm", "-f", "--", f"/root/.nimo-objects/{mine}-r1-0-aaaa.c1"])


def test_record_refuses_multiline_idents():
    with pytest.raises(EmulationError, match="cannot record"):
        record(FakeHost("c1"), "c0-r1-0-ab", [("dir", "/tmp/a\nb")])


def test_clean_inventory_forgets_the_cleaned_hosts_objects_in_the_store(tmp_path,
                                                                       monkeypatch):
    from test_executor_runs import write_inventory

    from nimo.store import MemoryStore
    from nimo.store.objects import HostObject
    from workbench import clean as clean_module
    from workbench.remote.connection import Connection

    hosts = {n: FakeHost(n) for n in ("c1", "c2", "s1")}
    hosts["c2"].on(lambda argv: argv[3:4] == ("nimo-markers",), exit_code=1, stderr="gone")
    monkeypatch.setattr(Connection, "for_host", staticmethod(lambda h, **kw: hosts[h.name]))
    store = MemoryStore()
    for host in hosts:
        store.record_host_object(HostObject("exp", "c1-r1-0-ab", host, "dir", "/tmp/nimo-x"))
    store.record_host_object(HostObject("other", "c2-r1-0-ab", "c1", "dir", "/tmp/nimo-y"))
    reports = clean_module.clean_inventory(write_inventory(tmp_path), "exp", store)
    assert isinstance(reports["c2"], Exception) and reports["c1"].empty
    assert [o.host for o in store.host_objects("exp")] == ["c2"]  # not cleaned: kept
    assert len(store.host_objects("other")) == 1


def test_the_marker_directory_is_found_without_being_made(tmp_path):
    """`nimo clean` on a host we never ran on reads no markers and makes nothing: the
    marker-directory script (run here by the local sh) exits 4 in "find" mode when the
    directory is missing, makes it private (0700) in "make" mode, and finds it after."""
    import os
    import subprocess

    from workbench.emulation.hostobjects import _MARKDIR, MARK_DIR

    def markdir(mode: str) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", "-c", _MARKDIR, "nimo-markdir", MARK_DIR, mode],
                              env={**os.environ, "HOME": str(tmp_path)}, capture_output=True,
                              text=True, check=False)

    assert markdir("find").returncode == 4 and not (tmp_path / MARK_DIR).exists()
    made = markdir("make")
    assert made.returncode == 0 and made.stdout.strip() == str(tmp_path / MARK_DIR)
    assert (tmp_path / MARK_DIR).stat().st_mode & 0o777 == 0o700
    found = markdir("find")
    assert found.returncode == 0 and found.stdout.strip() == str(tmp_path / MARK_DIR)
    (tmp_path / MARK_DIR).chmod(0o755)  # not private: refused in both modes
    assert markdir("find").returncode == 3 and markdir("make").returncode == 3
