"""Faults during an emulated run leave nothing behind; `clean` removes what a crash left (the
objects the hosts' markers list)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
import time

import pytest

from workbench.clean import clean
from workbench.emulation import (
    CgroupSpec,
    LinkEnd,
    NetworkSpec,
    apply_network,
    cgroup_applied,
    create_cgroup,
    network_applied,
)
from workbench.errors import HostError
from workbench.storage import dataset_mounted, mount_dataset, start_nfs_server

pytestmark = pytest.mark.lab


def _ends(lab, compute, storage):
    c, s = lab.host("compute1"), lab.host("storage1")
    return [LinkEnd(compute, c.data_iface, s.data_address),
            LinkEnd(storage, s.data_iface, c.data_address)]


def _session_children(listener: int) -> set[int]:
    out = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == listener:
                        out.add(int(p))
            except OSError:
                pass
    return out


def test_dropped_connection_during_emulated_run_leaves_nothing(lab, storage, assert_clean):
    compute = lab.connect("compute1")
    listener = lab.sshd_pid("compute1")
    before = _session_children(listener)
    compute.open()
    (ours,) = _session_children(listener) - before
    lab.export_dir.mkdir(exist_ok=True)
    killer = threading.Timer(1.0, os.kill, (ours, signal.SIGKILL))
    with pytest.raises(HostError, match="compute1: connection dropped"):  # noqa: SIM117
        with network_applied(_ends(lab, compute, storage),
                             NetworkSpec(delay_ms=6, rate_mbit=40), run_id="drop"):
            with cgroup_applied(compute, CgroupSpec(cpus=0.5, memory_mb=128),
                                run_id="drop") as cg:
                with dataset_mounted(compute, storage, str(lab.export_dir),
                                     storage_address=lab.host("storage1").data_address,
                                     run_id="drop", identity_file=str(lab.key_file),
                                     known_hosts=str(lab.known_hosts)):
                    killer.start()
                    compute.run(cg.prefix(["sleep", "30"]))
    killer.join()
    time.sleep(0.3)
    assert_clean(compute)
    assert_clean(storage, lab.host("storage1").data_iface)
    compute.close()


def test_clean_sweeps_what_a_crashed_run_left(lab, compute, storage, assert_clean, leftovers):
    # simulate a crash: apply everything and never tear down
    apply_network(_ends(lab, compute, storage), NetworkSpec(delay_ms=4, rate_mbit=30),
                  run_id="crash")
    cg = create_cgroup(compute, CgroupSpec(cpus=0.3), run_id="crash")
    sleeper = compute.start(cg.prefix(["sleep", "60"]))
    lab.export_dir.mkdir(exist_ok=True)
    mount_dataset(compute, storage, str(lab.export_dir),
                  storage_address=lab.host("storage1").data_address, run_id="crash",
                  identity_file=str(lab.key_file), known_hosts=str(lab.known_hosts))
    left = leftovers(compute)
    assert left["qdiscs"] and left["iptables"] and left["cgroups"] and left["mounts"]
    assert left["dirs"] and left["processes"]
    report = clean(compute)
    assert report.mounts and report.iptables and report.qdiscs and report.cgroups
    assert report.processes and report.dirs
    start_nfs_server(storage, str(lab.export_dir), bind_address=lab.host("storage1").data_address,
                     run_id="crash", port=2049)
    storage_report = clean(storage)
    assert storage_report.processes and storage_report.dirs
    assert ":2049" not in storage.run(["ss", "-Htln"]).stdout
    assert_clean(compute)
    assert_clean(storage, lab.host("storage1").data_iface)
    assert clean(compute).empty  # idempotent
    # the PID namespace is the machine's: look for our process, not for any "sleep 60"
    assert not compute.run(["kill", "-0", str(sleeper.pid)], check=False).ok


def test_clean_removes_the_work_dir_parents_a_run_made_only_while_empty(lab, compute,
                                                                       tmp_path) -> None:
    """A missing work-dir parent is made (0700) and recorded; a crash leaves it; clean
    rmdirs the parents it recorded, innermost first, and keeps one holding someone's file."""
    from workbench.emulation.hostobjects import check_parent, private_dir

    base = tempfile.mkdtemp(prefix="nimo-parents-", dir="/tmp")
    try:
        made = check_parent(compute, f"{base}/a/b", "crash-parent")
        assert made == [f"{base}/a", f"{base}/a/b"]
        assert oct(os.stat(f"{base}/a/b").st_mode & 0o777) == "0o700"
        private_dir(compute, "crash-parent", "work", f"{base}/a/b")
        assert check_parent(compute, f"{base}/a/b", "crash-parent") == []  # exists now
        kept = check_parent(compute, f"{base}/keep", "crash-parent")
        open(f"{base}/keep/user-file", "w").close()
        report = clean(compute, campaign=None)
        assert report.parents == [f"{base}/a/b", f"{base}/a"] and kept == [f"{base}/keep"]
        assert not os.path.exists(f"{base}/a") and os.path.exists(f"{base}/keep/user-file")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_parent_another_campaign_made_is_removed_by_the_last_campaign_to_end(
        lab, compute) -> None:
    """Campaign A made the work dirs' parent; campaign B found it while A ran and adopts it
    (A's marker records it as made). A ends while B's run dir is inside, so the parent
    stays; B's end removes it. Without adopting, nothing is recorded; a dir no marker
    records as made (a user's) is never adopted."""
    from workbench.clean import remove_empty_parents
    from workbench.emulation.hostobjects import check_parent, forget, private_dir

    base = tempfile.mkdtemp(prefix="nimo-adopt-", dir="/tmp")
    shared, users = f"{base}/work", f"{base}/users"
    try:
        made_by_a = check_parent(compute, shared, "adopt-a")
        assert made_by_a == [shared]
        assert check_parent(compute, shared, "adopt-b") == []
        adopted = check_parent(compute, shared, "adopt-b", adopt=True)
        assert adopted == [shared]
        work_b = private_dir(compute, "adopt-b", "work", shared, checked=True)
        assert remove_empty_parents(compute, made_by_a) == []  # A ends: B's dir is inside
        compute.run(["rm", "-rf", "--", work_b])
        assert remove_empty_parents(compute, adopted) == [shared]  # B ends
        assert not os.path.exists(shared)
        os.mkdir(users, 0o700)
        assert check_parent(compute, users, "adopt-b", adopt=True) == []
        assert os.path.isdir(users)
    finally:
        for run_id in ("adopt-a", "adopt-b"):
            forget(compute, run_id)
        shutil.rmtree(base, ignore_errors=True)


def test_clean_cli_sweeps_every_host_and_link(lab, storage, capsys, assert_clean):
    from workbench.cli import main

    s, c2 = lab.host("storage1"), lab.host("compute2")
    with lab.connect("compute2") as compute2:
        applied = apply_network([LinkEnd(compute2, c2.data_iface, s.data_address),
                                 LinkEnd(storage, s.data_iface, c2.data_address)],
                                NetworkSpec(delay_ms=2, rate_mbit=10), run_id="cli")
        storage_iface = applied.record.ends[1].iface  # compute2's link on the storage host
        assert storage_iface != s.data_iface
        assert main(["clean", str(lab.inventory_path)]) == 0
        out = capsys.readouterr().out
        assert all(h.name in out for h in lab.hosts)
        # processes: the delayer and the shell its SSH channel started it from
        assert re.search(r"^compute2: 1 iptables, [1-3] processes, 1 qdiscs, 1 dirs$", out, re.M)
        assert re.search(r"^storage1: 1 iptables, [1-3] processes, 1 qdiscs, 1 dirs$", out, re.M)
        assert_clean(compute2)
        assert_clean(storage, storage_iface)
