"""Safe on shared hosts (issue 11, defects 1, 7, 8, 9) on the namespace lab: an unprivileged
user cannot make root overwrite files or run its script; shaping never touches the SSH
interface; `nimo clean` removes what a killed campaign made and nothing else; a mount point
/proc/mounts would escape cannot leak a mount."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import fixed_runs_design, lab_inventory, leftovers

from nimo.records import RunRequest, RunStatus
from workbench.errors import EmulationError
from workbench.executor import open_runner
from workbench.storage import mount_dataset

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
ATTACKER = ["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", "sh", "-c"]
QUIET = {"sar": False, "tshark": False, "profile": False}
A = {"cpu_share": 1.0, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 400}
EVIL = 'import os\nopen("{canary}", "w").write(str(os.getuid()))\n'


def _inventory(lab, tmp_path: Path, name: str, drop: str | None = None, **changes) -> str:
    path = lab_inventory(lab, tmp_path, "checksum", 2, dataset="checksum-safety", name=name,
                         monitors=QUIET, **changes)
    if drop:
        doc = yaml.safe_load(Path(path).read_text())
        doc["hosts"] = [h for h in doc["hosts"] if h["name"] != drop]
        Path(path).write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture
def attacker_apps(compute):
    """/tmp/nimo-apps as the attacker (uid 4242) would pre-create it, mode 777, on compute1
    only: a tmpfs mounted over it in compute1's own mount namespace, so the real directory,
    which nimo processes of other labs on this machine may use, is never touched."""
    made = not Path("/tmp/nimo-apps").exists()  # the mount point, if this fixture makes it
    compute.run(["mkdir", "-p", "/tmp/nimo-apps"])
    compute.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=777,uid=4242,gid=4242",
                 "nimo-attack", "/tmp/nimo-apps"])
    host_view = Path("/tmp/nimo-apps")
    assert not any(p.is_symlink() for p in host_view.iterdir())  # not visible out here
    yield "/tmp/nimo-apps"
    compute.run(["umount", "-l", "/tmp/nimo-apps"], check=False)
    if made:  # an empty mount point left behind would be ours; a used one is not removed
        compute.run(["rmdir", "/tmp/nimo-apps"], check=False)


def test_pre_created_app_dir_cannot_redirect_or_swap_roots_files(lab, tmp_path, compute,
                                                                 attacker_apps):
    """Defect 1: the attacker (uid 4242) owns /tmp/nimo-apps before nimo runs: a symlink
    named like a shipped script points at a root file, and a loop swaps checksum.py for its
    own script as soon as it is uploaded. Neither reaches root any more."""
    tag = secrets.token_hex(4)
    apps = attacker_apps
    victim, canary = f"/tmp/victim-{tag}", f"/tmp/canary-{tag}"
    compute.run(["sh", "-c", f"echo original > {victim}; chmod 644 {victim}"])
    evil = EVIL.format(canary=canary).replace("\n", "\\n")
    swap = (f"ln -sf {victim} {apps}/compress.py && "
            f"for i in $(seq 3000); do if ! grep -q canary {apps}/checksum.py 2>/dev/null; "
            f"then rm -f {apps}/checksum.py; printf '{evil}' > {apps}/.evil && "
            f"chmod 755 {apps}/.evil && mv -f {apps}/.evil {apps}/checksum.py; fi; "
            "sleep 0.01; done")
    attacker = compute.start([*ATTACKER, swap])
    try:
        time.sleep(0.3)
        with open_runner(_inventory(lab, tmp_path, "d1", drop="compute2")) as runner:
            out = runner.run(RunRequest(1, A, "train"))
            app_dir = getattr(runner._pool, "app_dirs", {}).get("compute1", apps)
            mode = compute.run(["stat", "-c", "%u %a %F", app_dir]).stdout.split()
    finally:
        attacker.kill()
    wrote, ran = compute.run(["cat", victim]).stdout, compute.run(["cat", canary], check=False)
    compute.run(["rm", "-f", victim, canary])
    assert wrote == "original\n", "root wrote through the attacker's symlink"
    assert not ran.ok, f"root ran the attacker's script (it wrote uid {ran.stdout})"
    assert out.status is RunStatus.DONE, out.reason
    assert mode == ["0", "700", "directory"] and not app_dir.startswith(apps)


def test_a_workdir_others_can_change_is_refused(lab, tmp_path, compute):
    """Defect 1, work dirs: a user-given workdir owned by another user is refused with one
    line naming host and path (a run dir inside it could be swapped)."""
    evil = f"/tmp/nimo-work-{secrets.token_hex(4)}"
    compute.run([*ATTACKER, f"mkdir -m 777 {evil}"])
    doc = yaml.safe_load(Path(_inventory(lab, tmp_path, "base")).read_text())
    inv = _inventory(lab, tmp_path, "d1w", application={**doc["application"], "workdir": evil})
    with open_runner(inv) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    compute.run(["rm", "-rf", evil])
    assert out.status is RunStatus.FAILED
    assert f"compute1: directory {evil} is not safe: {evil} is owned by uid 4242" in out.reason
    assert "\n" not in out.reason


def _ssh_iface(conn, address: str) -> str:
    return conn.run(["ip", "-o", "addr", "show", "to", address]).stdout.split()[1].split("@")[0]


def test_shaping_refuses_the_interface_carrying_ssh(lab, tmp_path, storage):
    """Defect 7: compute1's data_address is its management address, so the storage host
    reaches it over its management interface. nimo refuses to shape it (one line) and
    neither the run nor `nimo clean` touches the administrator's qdisc there."""
    from workbench.cli import main

    s, c1 = lab.host("storage1"), lab.host("compute1")
    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    for h in doc["hosts"]:
        if h["name"] == "compute1":
            h["data_address"] = c1.address
    inv = _inventory(lab, tmp_path, "d7", drop="compute2", hosts=doc["hosts"])
    mgmt = _ssh_iface(storage, s.address)
    storage.run(["tc", "qdisc", "add", "dev", mgmt, "root", "handle", "1:", "htb"])
    try:
        with open_runner(inv) as runner:
            out = runner.run(RunRequest(1, {**A, "rate_mbit": 100}, "train"))
        assert main(["clean", inv]) == 0
        root = storage.run(["tc", "qdisc", "show", "dev", mgmt, "root"]).stdout
    finally:
        storage.run(["tc", "qdisc", "del", "dev", mgmt, "root"], check=False)
    assert out.status is RunStatus.FAILED
    assert f"storage1: refusing to shape {mgmt}: it carries the SSH (management) connection" \
        in out.reason
    assert root.startswith("qdisc htb 1: root"), root


def _netns_procs(conn, *names: str) -> list[str]:
    out = conn.run(["sh", "-c", 'me=$(readlink /proc/self/ns/net); for d in /proc/[0-9]*; do '
                    '[ "$(readlink $d/ns/net 2>/dev/null)" = "$me" ] && '
                    'tr "\\0" " " < $d/cmdline 2>/dev/null && echo; done; true']).stdout
    return [ln for ln in out.splitlines() if any(ln.startswith(n) or f"/{n} " in ln
                                                   for n in names)]


DESIGN = fixed_runs_design("safety", 4)


def test_clean_after_a_killed_campaign_removes_its_objects_only(lab, tmp_path, compute,
                                                                 storage):
    """Defect 8: a campaign is SIGKILLed mid-run (sadc, dumpcap, delayer running, work dir
    made). `nimo clean` ends the monitors at once and removes every object of the run, but
    leaves an administrator's htb on compute2's data interface and someone's sshfs mount
    at /tmp/nimo-foreign-*."""
    from workbench.cli import main

    c2, s = lab.host("compute2"), lab.host("storage1")
    foreign = f"/tmp/nimo-foreign-{secrets.token_hex(4)}"
    compute.run(["mkdir", foreign])
    compute.run(["sshfs", "-o", f"ro,IdentityFile={lab.key_file},UserKnownHostsFile="
                 f"{lab.known_hosts},StrictHostKeyChecking=yes,BatchMode=yes",
                 f"root@{s.data_address}:{lab.export_dir}", foreign])
    knobs = [{"name": "delay_ms", "kind": "delay_ms", "levels": [4]},
             {"name": "rate_mbit", "kind": "rate_mbit", "levels": [8, 16]}]
    doc = yaml.safe_load(Path(_inventory(lab, tmp_path, "base")).read_text())
    inv = lab_inventory(lab, tmp_path, "checksum", 24, dataset="checksum-d8", name="d8",
                        knobs=knobs, monitors={"sar": True, "tshark": True, "profile": False},
                        hosts=[h for h in doc["hosts"] if h["name"] != "compute2"])
    (tmp_path / "design.yaml").write_text(DESIGN)
    with lab.connect("compute2") as compute2:
        compute2.run(["tc", "qdisc", "add", "dev", c2.data_iface, "root", "handle", "1:", "htb"])
        proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", "campaign", "run", inv, "--design",
             str(tmp_path / "design.yaml"), "--store", f"sqlite:///{tmp_path}/d8.db",
             "--name", "d8", "--quiet"],
            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while len(_netns_procs(compute, "sadc", "dumpcap", "python3")) < 3:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the run never started its monitors"
                time.sleep(0.1)
            time.sleep(0.5)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        try:
            assert _netns_procs(compute, "sadc", "dumpcap")
            t0 = time.monotonic()
            assert main(["clean", str(lab.inventory_path)]) == 0
            print(f"nimo clean after the kill: {time.monotonic() - t0:.2f} s")
            assert not _netns_procs(compute, "sadc", "dumpcap", "python3")  # ended at once
            assert not _netns_procs(storage, "sadc", "dumpcap")
            admin = compute2.run(["tc", "qdisc", "show", "dev", c2.data_iface, "root"]).stdout
            mounts = compute.run(["cat", "/proc/mounts"]).stdout
        finally:
            compute2.run(["tc", "qdisc", "del", "dev", c2.data_iface, "root"], check=False)
            compute.run(["fusermount3", "-u", foreign], check=False)
            compute.run(["rmdir", foreign], check=False)
    assert admin.startswith("qdisc htb 1: root"), admin
    assert f" {foreign} fuse.sshfs " in mounts
    for conn, iface in ((compute, "data0"), (storage, s.data_iface)):
        left = {k: v for k, v in leftovers(conn, iface).items() if v}
        assert not left, f"{conn.name}: {left}"
    work = compute.run(["sh", "-c", "ls -d /tmp/nimo-c*-work-* 2>/dev/null; true"]).stdout
    assert not work.strip()


@pytest.mark.parametrize("bad", ["\\", "\t", "\n"], ids=["backslash", "tab", "newline"])
def test_a_mountpoint_proc_mounts_escapes_is_refused_and_nothing_leaks(lab, compute, storage,
                                                                        bad):
    """Defect 9: such a mount point is refused up front with one line naming host and path;
    no sshfs mount is made, so none can leak."""
    lab.export_dir.mkdir(exist_ok=True)
    mnt = f"/tmp/nimo-m{bad}x-{secrets.token_hex(3)}"
    before = compute.run(["cat", "/proc/mounts"]).stdout
    with pytest.raises(EmulationError, match=r"^compute1: storage.mountpoint .* backslash, "
                       "tab or newline"):
        mount_dataset(compute, storage, str(lab.export_dir),
                      storage_address=lab.host("storage1").data_address, run_id="d9",
                      identity_file=str(lab.key_file), known_hosts=str(lab.known_hosts),
                      mountpoint=mnt)
    assert compute.run(["cat", "/proc/mounts"]).stdout == before
    assert not compute.run(["test", "-e", mnt], check=False).ok
