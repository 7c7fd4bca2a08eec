"""Local (root namespace) helpers for the lab: run argv lists, list mounts, signal PIDs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence

from workbench.errors import LabError
from workbench.processes import pid_alive


def sh(argv: Sequence[str], *, check: bool = True, input: str | None = None) -> str:
    """Run a local argv (never through a shell); raise :class:`LabError` on failure."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, input=input, timeout=60)
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



def terminate(pids: Iterable[int], grace_s: float = 1.0) -> list[int]:
    """SIGTERM each PID, wait up to ``grace_s``, then SIGKILL survivors; returns the PIDs hit."""
    pids = [p for p in pids if p > 1 and p != os.getpid()]
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.02)
    for p in pids:
        if pid_alive(p):
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.02)
    return pids


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
