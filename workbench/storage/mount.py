"""Mount the storage host's dataset directory on the compute host over the data path.

``method="auto"`` picks NFS when the compute kernel has an NFS client (``nfs`` in
/proc/filesystems) and sshfs otherwise. Mounts are made, verified (/proc/mounts) and removed
only over SSH, because they live in the compute sshd's mount namespace.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ParamSpec

from workbench.emulation.common import check_run_id, run_checked
from workbench.emulation.hostobjects import check_parent, check_path_chars, private_dir, record
from workbench.errors import EmulationError, RemoteCommandFailed
from workbench.remote.connection import Connection
from workbench.storage.nfs import NfsExport, start_nfs_server, stop_nfs_server

METHODS = ("auto", "nfs", "sshfs")
P = ParamSpec("P")


@dataclass
class MountRecord:
    """How the dataset reached the compute host."""

    method: str  # "nfs" | "sshfs"
    host: str
    source: str
    mountpoint: str
    options: str
    setup_s: float = 0.0
    teardown_s: float = 0.0
    created_dir: bool = False
    nfs: NfsExport | None = None  # the ganesha server started for an "nfs" mount
    storage: Connection | None = field(default=None, repr=False)
    compute: Connection | None = field(default=None, repr=False)


def has_nfs_client(conn: Connection) -> bool:
    """True when the host's kernel can mount NFS (``nfs`` listed in /proc/filesystems)."""
    text = conn.run(["cat", "/proc/filesystems"], timeout=10).stdout
    return any(line.split()[-1:] in (["nfs"], ["nfs4"]) for line in text.splitlines())


def _no_comma(value: str, what: str) -> str:
    if "," in value or "\n" in value:
        raise EmulationError(f"{what} {value!r} must not contain ',' or newlines")
    return value


def sshfs_argv(source: str, mountpoint: str, *, identity_file: str | None,
               known_hosts: str | None, port: int) -> tuple[list[str], str]:
    """Pure: the sshfs argv (read-only, key auth, strict host keys) and its -o string."""
    # curve25519 key exchange: the default post-quantum hybrid costs ~0.2 s of CPU per mount
    opts = ["ro", "BatchMode=yes", "StrictHostKeyChecking=yes", "PasswordAuthentication=no",
            "ConnectTimeout=5", "ServerAliveInterval=5", "ServerAliveCountMax=3",
            "KexAlgorithms=curve25519-sha256", f"port={int(port)}"]
    if identity_file:
        opts.append(f"IdentityFile={_no_comma(identity_file, 'identity file')}")
    if known_hosts:
        opts.append(f"UserKnownHostsFile={_no_comma(known_hosts, 'known_hosts file')}")
    optstr = ",".join(opts)
    return ["sshfs", "-o", optstr, source, mountpoint], optstr


def nfs_argv(source: str, mountpoint: str, port: int = 2049) -> tuple[list[str], str]:
    """Pure: the kernel NFSv4 mount argv (read-only) and its -o string."""
    optstr = f"ro,port={int(port)},proto=tcp,timeo=50,retrans=2"
    return ["mount", "-t", "nfs4", "-o", optstr, source, mountpoint], optstr


_OCTAL = re.compile(r"\\([0-7]{3})")


def proc_mounts(text: str) -> list[tuple[str, str, str]]:
    """Pure: (source, mount point, fstype) of each /proc/mounts line, with the kernel's
    octal escapes (space, tab, newline, backslash) decoded."""
    out = []
    for line in text.splitlines():
        f = line.split(" ")
        if len(f) >= 3:
            src, mnt = (_OCTAL.sub(lambda m: chr(int(m.group(1), 8)), x) for x in f[:2])
            out.append((src, mnt, f[2]))
    return out


def _mount_entry(conn: Connection, mountpoint: str) -> tuple[str, str] | None:
    """(source, fstype) of the mount at ``mountpoint`` per the host's /proc/mounts."""
    text = conn.run(["cat", "/proc/mounts"], timeout=10).stdout
    for src, mnt, fstype in proc_mounts(text):
        if mnt == mountpoint:
            return src, fstype
    return None


def mount_dataset(
    compute: Connection,
    storage: Connection,
    export_path: str,
    *,
    storage_address: str,
    run_id: str,
    method: str = "auto",
    identity_file: str | None = None,
    known_hosts: str | None = None,
    ssh_port: int = 22,
    ssh_user: str = "root",
    mountpoint: str | None = None,
    nfs_port: int = 2049,
) -> MountRecord:
    """Export ``export_path`` from ``storage`` and mount it read-only on ``compute``.

    ``mountpoint`` defaults to a private ``/tmp/nimo-<run_id>-mnt-XXXXXX.<host>``; a given
    one is checked (no ``\\``, tab or newline; owner and mode of it and its parents). For ``nfs`` an
    nfs-ganesha server is started on the storage host (``workbench.storage.nfs``) and
    stopped again on unmount. Raises :class:`EmulationError` when the export is missing or
    the mount cannot be verified.
    """
    t0 = time.monotonic()
    method = _check_request(compute, storage, export_path, run_id, method)
    mnt, created = _mount_point(compute, run_id, mountpoint)
    if method == "sshfs":
        source = f"{ssh_user}@{storage_address}:{export_path}"
        argv, optstr = sshfs_argv(source, mnt, identity_file=identity_file,
                                  known_hosts=known_hosts, port=ssh_port)
    else:
        source = f"{storage_address}:/nimo"
        argv, optstr = nfs_argv(source, mnt, nfs_port)
    record = MountRecord(method, compute.name, source, mnt, optstr, created_dir=created,
                         storage=storage, compute=compute)
    try:
        if method == "nfs":
            record.nfs = start_nfs_server(storage, export_path, bind_address=storage_address,
                                          run_id=run_id, port=nfs_port)
        _mount_verified(compute, argv, record)
    except BaseException:
        with contextlib.suppress(Exception):
            unmount_dataset(compute, record)
        raise
    record.setup_s = time.monotonic() - t0
    return record


def _mount_point(compute: Connection, run_id: str, given: str | None) -> tuple[str, bool]:
    """The mount point (private, or the checked ``given`` one) and whether we made it."""
    if not given:
        return private_dir(compute, run_id, "mnt"), True
    check_path_chars(compute, given, "storage.mountpoint")
    if _mount_entry(compute, given) is not None:
        raise EmulationError(f"{compute.name}: something is already mounted at {given}")
    created = compute.run(["test", "-d", given], check=False, timeout=10).exit_code != 0
    check_parent(compute, given)  # makes it (0700) when missing
    record(compute, run_id, [("mount", given)])
    return given, created


def _check_request(compute: Connection, storage: Connection, export_path: str, run_id: str,
                   method: str) -> str:
    """Validate a mount request; returns the method to use (``auto`` resolved)."""
    if method not in METHODS:
        raise EmulationError(f"unknown storage method {method!r}", hint=f"valid: {METHODS}")
    if not export_path.startswith("/"):
        raise EmulationError(f"export path {export_path!r} must be absolute")
    check_run_id(run_id)
    if storage.run(["test", "-d", export_path], check=False, timeout=10).exit_code != 0:
        raise EmulationError(f"{storage.name}: export directory {export_path} does not exist")
    if method == "auto":
        return "nfs" if has_nfs_client(compute) else "sshfs"
    if method == "nfs" and not has_nfs_client(compute):
        raise EmulationError(f"{compute.name}: kernel has no NFS client", hint="use sshfs")
    return method


def _mount_verified(compute: Connection, argv: list[str], record: MountRecord) -> None:
    """Mount, then check /proc/mounts and that the mount point can be read."""
    mnt = record.mountpoint
    run_checked(compute, argv, f"{record.method} mount of {record.source}", timeout=30)
    entry = _mount_entry(compute, mnt)
    if entry is None or not entry[1].startswith(("fuse.sshfs", "nfs")):
        raise EmulationError(f"{compute.name}: {mnt} not in /proc/mounts after mounting")
    run_checked(compute, ["ls", "-d", f"{mnt}/."], f"reading {mnt}")


def unmount_dataset(compute: Connection, record: MountRecord) -> float:
    """Unmount (fusermount -u, else lazy umount), verify via /proc/mounts, remove the mount
    point if we created it. Idempotent; returns the seconds spent."""
    t0 = time.monotonic()
    mnt = record.mountpoint
    if _mount_entry(compute, mnt) is not None:
        tries = (
            [["fusermount3", "-u", mnt], ["fusermount", "-u", mnt], ["umount", "-l", mnt]]
            if record.method == "sshfs" else [["umount", mnt], ["umount", "-l", mnt]]
        )
        for argv in tries:
            try:
                compute.run(argv, timeout=30)
                break
            except RemoteCommandFailed:
                continue
    if _mount_entry(compute, mnt) is not None:
        raise EmulationError(f"{compute.name}: {mnt} is still mounted after unmounting")
    if record.created_dir:
        compute.run(["rmdir", mnt], check=False, timeout=10)
    if record.nfs is not None and record.storage is not None:
        stop_nfs_server(record.storage, record.nfs)
    record.teardown_s = time.monotonic() - t0
    return record.teardown_s


def _always_unmounted(
    mount: Callable[P, MountRecord],
) -> Callable[P, contextlib.AbstractContextManager[MountRecord]]:
    @contextlib.contextmanager
    def mounted(*args: P.args, **kwargs: P.kwargs) -> Iterator[MountRecord]:
        record = mount(*args, **kwargs)
        try:
            yield record
        finally:
            assert record.compute is not None
            unmount_dataset(record.compute, record)

    mounted.__doc__ = "Context manager around :func:`mount_dataset`; always unmounts."
    return mounted


dataset_mounted = _always_unmounted(mount_dataset)
