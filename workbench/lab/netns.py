"""Local (root namespace) helpers for the lab: run argv lists, list mounts, signal PIDs,
wait for a condition, remove what runs left behind."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from workbench.errors import LabError
from workbench.processes import pid_alive


def sh(argv: Sequence[str], *, check: bool = True) -> str:
    """Run a local argv (never through a shell); raise :class:`LabError` on failure."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise LabError(f"`{' '.join(argv)}` exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return proc.stdout


def netns_list() -> set[str]:
    """Names of the network namespaces that exist now."""
    return {line.split()[0] for line in sh(["ip", "netns", "list"], check=False).splitlines()
            if line.strip()}


def netns_pids(ns: str) -> list[int]:
    """PIDs of every process in network namespace ``ns``."""
    out = sh(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def wait_until(done: Callable[[], bool], timeout_s: float, interval_s: float = 0.02) -> bool:
    """Poll ``done`` every ``interval_s`` until it is true (True) or ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval_s)
    return True


def terminate(pids: Iterable[int], grace_s: float = 1.0) -> list[int]:
    """SIGTERM each PID, wait up to ``grace_s``, then SIGKILL survivors; returns the PIDs hit."""
    pids = [p for p in pids if p > 1 and p != os.getpid()]
    _signal(pids, signal.SIGTERM)
    if not wait_until(lambda: not any(pid_alive(p) for p in pids), grace_s):
        _signal([p for p in pids if pid_alive(p)], signal.SIGKILL)
        wait_until(lambda: not any(pid_alive(p) for p in pids), 2.0)
    return pids


def _signal(pids: Iterable[int], sig: signal.Signals) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, sig)


def remove_scoped_cgroups(token: str) -> list[str]:
    """rmdir cgroups named ``nimo-*.<token>`` left by runs on a lab host (members are dead)."""
    root = Path("/sys/fs/cgroup")
    if not root.is_dir():
        return []
    return [str(d) for d in root.rglob(f"nimo-*.{token}")
            if d.is_dir() and wait_until(partial(_rmdir, d), 1.0)]


def _rmdir(path: Path) -> bool:
    """True once ``path`` is gone; False while it is busy."""
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def remove_scoped_tmp(token: str) -> list[str]:
    """Remove directories ``/tmp/nimo-*.<token>`` left by runs on a lab host (``token`` may
    be a glob), after unmounting (lazily) whatever is still mounted inside them."""
    dirs = [str(d) for d in Path("/tmp").glob(f"nimo-*.{token}")]
    for mnt in reversed(mount_points()):  # innermost first
        if any(mnt == d or mnt.startswith(f"{d}/") for d in dirs):
            sh(["umount", "-l", mnt], check=False)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return dirs


def remove_scoped_markers(token: str, user: str = "root") -> list[str]:
    """Remove the object markers ``~user/.nimo-objects/*.<token>`` of a lab host whose
    objects are gone with it (``token`` may be a glob)."""
    from workbench.emulation.hostobjects import MARK_DIR

    try:
        home = Path(pwd.getpwnam(user).pw_dir)
    except KeyError:
        return []
    found = [p for p in (home / MARK_DIR).glob(f"*.{token}") if p.is_file()]
    for p in found:
        p.unlink(missing_ok=True)
    return [str(p) for p in found]


def remove_scoped(token: str, user: str = "root") -> dict[str, list[str]]:
    """Remove what runs left named after a lab host (``token``, may be a glob): its
    cgroups, /tmp dirs and object markers (``user``'s). Returns them by kind."""
    return {"cgroups": remove_scoped_cgroups(token), "dirs": remove_scoped_tmp(token),
            "markers": remove_scoped_markers(token, user)}


def mount_points() -> list[str]:
    """Mount points of the root namespace, in mount order (escapes decoded)."""
    from workbench.storage.mount import proc_mounts

    return [mnt for _, mnt, _ in proc_mounts(Path("/proc/self/mounts").read_text())]


def cgroup_mounts() -> list[tuple[str, str, str]]:
    """(fstype, mountpoint, options) of the root namespace's cgroup hierarchies, in order."""
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mp, fstype, opts = line.split()[:4]
            if mp == "/sys/fs/cgroup" and fstype == "tmpfs":
                out.append((fstype, mp, "mode=755"))
            elif fstype in ("cgroup", "cgroup2") and mp.startswith("/sys/fs/cgroup"):
                keep = [o for o in opts.split(",") if o not in ("rw", "relatime", "nosuid",
                                                                "nodev", "noexec")]
                out.append((fstype, mp, ",".join(keep)))
    return out
