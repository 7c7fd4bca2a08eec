"""Idempotent sweep of everything the workbench leaves on a host (names prefixed ``nimo-``).

Removes, on one host over SSH: nimo- mounts (sshfs/NFS), iptables NFQUEUE rules commented
``nimo-*``, delayer and nfs-ganesha processes (in this host's network namespace), shaping
root qdiscs on the data interfaces, ``nimo-*.<host>`` cgroups and ``/tmp/nimo-*.<host>``
directories.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from workbench.emulation.common import host_token
from workbench.emulation.network import (
    SHAPING_QDISCS,
    NetworkSpec,
    iptables_cmd,
    list_qdiscs,
    route_iface,
)
from workbench.remote.connection import Connection

NETWORK_FS = ("fuse.sshfs", "nfs", "nfs4")  # mounts swept when their dir is named nimo-*

# Kill nimo delayers and ganesha servers whose network namespace is this host's (lab hosts
# share one PID space), matched on exact argv words: the delayer's argv[1] is its script,
# ganesha is `ganesha.nfsd -f /tmp/nimo-nfs-...`. A shell whose command line merely mentions
# them (such as this script's own parent) never matches.
_KILL_DAEMONS = (
    'hit() { case "$2" in /tmp/nimo-*/nimo-delayer.py) return 0;; esac; '
    'case "$1" in *ganesha.nfsd) [ "$2" = -f ] && case "$3" in /tmp/nimo-nfs-*) return 0;; '
    'esac;; esac; return 1; }; '
    'me=$(readlink /proc/self/ns/net); for d in /proc/[0-9]*; do p=${d#/proc/}; '
    '{ [ "$p" = "$$" ] || [ "$p" = "$PPID" ]; } && continue; '
    'tr "\\0" "\\n" < "$d/cmdline" 2>/dev/null | { IFS= read -r a; IFS= read -r b; '
    'IFS= read -r c; hit "$a" "$b" "$c" && [ "$(readlink "$d/ns/net" 2>/dev/null)" = "$me" ] '
    '&& kill -KILL "$p" && echo "$p"; }; done; true'
)
_CGROUPS = (
    'find /sys/fs/cgroup -mindepth 2 -maxdepth 6 -type d -name "nimo-*.$1" 2>/dev/null; true'
)
_KILL_CG = (
    'for d; do for i in $(seq 50); do p=$(cat "$d/cgroup.procs" 2>/dev/null); '
    '[ -z "$p" ] && break; kill -KILL $p 2>/dev/null; sleep 0.02; done; '
    'for i in $(seq 50); do [ -d "$d" ] || break; rmdir "$d" 2>/dev/null && break; sleep 0.02; '
    'done; done; true'
)
_TMPDIRS = 'for d in /tmp/nimo-*."$1"; do [ -d "$d" ] && echo "$d"; done; true'


@dataclass
class CleanReport:
    """What :func:`clean` removed on one host."""

    host: str
    mounts: list[str] = field(default_factory=list)
    iptables: list[str] = field(default_factory=list)
    processes: list[int] = field(default_factory=list)
    qdiscs: list[str] = field(default_factory=list)
    cgroups: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.mounts or self.iptables or self.processes or self.qdiscs
                    or self.cgroups or self.dirs)

    def summary(self) -> str:
        parts = [f"{len(v)} {k}" for k, v in self.__dict__.items() if k != "host" and v]
        return f"{self.host}: " + (", ".join(parts) if parts else "nothing to remove")


def clean(
    conn: Connection, data_ifaces: Iterable[str] = (), peers: Iterable[str] = ()
) -> CleanReport:
    """Remove every nimo- leftover on the host; safe to run any number of times.

    Shaping qdiscs are removed only on ``data_ifaces`` and on the interfaces that route to
    the data addresses in ``peers`` (never on other interfaces: they may carry the admin's).
    """
    report = CleanReport(conn.name)
    token = host_token(conn)
    ifaces = list(dict.fromkeys(data_ifaces))
    for peer in peers:
        routed = route_iface(conn, peer)
        if routed and routed != "lo" and routed not in ifaces:
            ifaces.append(routed)
    report.mounts = _clean_mounts(conn)
    report.iptables = _clean_iptables(conn)
    out = conn.run(["sh", "-c", _KILL_DAEMONS], check=False, timeout=30).stdout
    report.processes = [int(p) for p in out.split() if p.isdigit()]
    for iface in ifaces:
        kinds = [q.get("kind") for q in list_qdiscs(conn, iface) if q.get("root")]
        if any(k in SHAPING_QDISCS for k in kinds):
            for argv in NetworkSpec.teardown_cmds(iface):
                conn.run(argv, check=False, timeout=30)
            report.qdiscs.append(f"{iface}:{','.join(k for k in kinds if k)}")
    found = conn.run(["sh", "-c", _CGROUPS, "nimo-find", token], timeout=30).stdout.split()
    if found:
        conn.run(["sh", "-c", _KILL_CG, "nimo-rmcg", *found], timeout=60)
        report.cgroups = found
    dirs = conn.run(["sh", "-c", _TMPDIRS, "nimo-ls", token], timeout=30).stdout.split()
    if dirs:
        conn.run(["rm", "-rf", "--one-file-system", *dirs], check=False, timeout=60)
        report.dirs = dirs
    return report


def _clean_mounts(conn: Connection) -> list[str]:
    removed = []
    text = conn.run(["cat", "/proc/mounts"], timeout=10).stdout
    for line in text.splitlines():
        f = line.split()
        if len(f) < 3 or f[2] not in NETWORK_FS:
            continue
        mnt = f[1].replace("\\040", " ")
        if not mnt.rstrip("/").rsplit("/", 1)[-1].startswith("nimo-"):
            continue
        for argv in (["fusermount3", "-u", mnt], ["umount", "-l", mnt]):
            if conn.run(argv, check=False, timeout=30).exit_code == 0:
                break
        removed.append(mnt)
    return removed


def _clean_iptables(conn: Connection) -> list[str]:
    removed = []
    res = conn.run(["iptables", "-w", "5", "-t", "mangle", "-S", "PREROUTING"], check=False,
                   timeout=30)
    for line in res.stdout.splitlines():
        if not line.startswith("-A PREROUTING ") or "NFQUEUE" not in line:
            continue
        tokens = shlex.split(line)[2:]
        comment = tokens[tokens.index("--comment") + 1] if "--comment" in tokens else ""
        if comment.startswith("nimo-"):
            conn.run(iptables_cmd("-D", tokens), check=False, timeout=30)
            removed.append(line)
    return removed


def clean_inventory(path: str | Path) -> dict[str, CleanReport | BaseException]:
    """Run :func:`clean` on every host of an inventory file, concurrently.

    Each host's data interface is swept, plus the interfaces that route to its peers' data
    addresses (a storage host has one link per compute host). Returns ``{host: report or the
    exception}``; never raises for a single unreachable host.
    """
    from workbench.inventory import load_inventory_hosts
    from workbench.remote.group import map_hosts

    hosts = {h.name: h for h in load_inventory_hosts(Path(path))}

    def peers(name: str) -> list[str]:
        h = hosts[name]
        if h.role == "compute":
            return [hosts[h.peer].data_address] if h.peer in hosts else []
        return [o.data_address for o in hosts.values() if o.peer == name]

    conns = [Connection.for_host(h, connect_timeout=5, retries=1) for h in hosts.values()]
    try:
        return map_hosts(conns, lambda c: clean(c, [hosts[c.name].data_iface], peers(c.name)))
    finally:
        for c in conns:
            c.close()
