"""Idempotent removal of what nimo's runs left on a host, and of nothing else.

What a run makes is recorded, before it is made, in a marker on the host
(``workbench.emulation.hostobjects``); ``clean`` removes exactly those objects: processes
whose command line names a path in a recorded private dir (delayer, nfs-ganesha, sadc,
dumpcap; killed at once), mounts on recorded mount points or inside recorded dirs, iptables
rules with a recorded comment, root qdiscs with nimo's handle on recorded interfaces, recorded
cgroups, recorded dirs; then the markers. With ``campaign`` only that campaign's objects.
An administrator's qdisc, someone's mount named ``nimo-...``, another campaign's run: untouched.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.emulation.common import host_token
from workbench.emulation.datapath import is_ours, root_qdisc
from workbench.emulation.hostobjects import ObjectLog, campaign_token, existing_marker_dir
from workbench.emulation.network import NetworkSpec, iptables_cmd
from workbench.remote.connection import Connection
from workbench.storage.mount import proc_mounts

# PIDs in this host's network namespace (lab hosts share one PID space) any of whose argv
# words contains one of the newline-separated strings in $1; this shell and its parent skip
# kills the processes of this host's network namespace whose command line names one of
# the dirs in $1, except this script and its ancestors (the login shell and `timeout` that
# run it carry the dirs in their own command lines)
_KILL_NAMING = (
    'me=$(readlink /proc/self/ns/net); mine=" $$ "; q=$$; while [ "$q" -gt 1 ]; do '
    'q=$(sed "s/.*) //" "/proc/$q/stat" 2>/dev/null | cut -d" " -f2); '
    '[ -n "$q" ] || break; mine="$mine$q "; done; '
    'for d in /proc/[0-9]*; do p=${d#/proc/}; '
    'case "$mine" in *" $p "*) continue;; esac; '
    '[ "$(readlink "$d/ns/net" 2>/dev/null)" = "$me" ] || continue; '
    'if tr "\\0" "\\n" < "$d/cmdline" 2>/dev/null | grep -qF -- "$1"; then '
    'kill -KILL "$p" 2>/dev/null && echo "$p"; fi; done; true'
)
_KILL_CG = (
    'for d; do [ -d "$d" ] || continue; echo "$d"; for i in $(seq 50); do '
    'p=$(cat "$d/cgroup.procs" 2>/dev/null); [ -z "$p" ] && break; kill -KILL $p 2>/dev/null; '
    'sleep 0.02; done; for i in $(seq 50); do [ -d "$d" ] || break; rmdir "$d" 2>/dev/null '
    '&& break; sleep 0.02; done; done; true'
)
_MARKERS = 'for f in "$1"/"$2"*."$3"; do [ -f "$f" ] && echo "$f"; done; true'
_EXISTING = 'for d; do [ -d "$d" ] && [ ! -L "$d" ] && echo "$d"; done; true'
_LABELS = {"parents": "empty work-dir parents"}
_RMDIR_EMPTY = 'for d; do rmdir -- "$d" 2>/dev/null && echo "$d"; done; true'


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
    parents: list[str] = field(default_factory=list)  # made for a work dir; removed if empty

    @property
    def empty(self) -> bool:
        return not (self.mounts or self.iptables or self.processes or self.qdiscs
                    or self.cgroups or self.dirs or self.parents)

    def summary(self) -> str:
        parts = [f"{len(v)} {_LABELS.get(k, k)}" for k, v in self.__dict__.items()
                 if k != "host" and v]
        return f"{self.host}: " + (", ".join(parts) if parts else "nothing to remove")


@dataclass
class Recorded:
    """The objects the markers of one host list, by kind (``hostobjects.KINDS``)."""

    files: list[str] = field(default_factory=list)
    objects: dict[str, list[str]] = field(default_factory=dict)

    def of(self, kind: str) -> list[str]:
        return list(dict.fromkeys(self.objects.get(kind, [])))


def read_markers(conn: Connection, campaign: str | None = None) -> Recorded:
    """The host's markers (of ``campaign``'s runs only, if given)."""
    prefix = f"{campaign_token(campaign)}-" if campaign is not None else ""
    directory = existing_marker_dir(conn)
    if directory is None:  # never ran here: nothing recorded, nothing to make
        return Recorded([])
    out = conn.run(["sh", "-c", _MARKERS, "nimo-markers", directory, prefix,
                    host_token(conn)], timeout=30).stdout
    found = Recorded(out.split("\n")[:-1] if out else [])
    if found.files:
        text = conn.run(["cat", "--", *found.files], check=False, timeout=30).stdout
        for line in text.splitlines():
            kind, _, ident = line.partition("\t")
            if ident:
                found.objects.setdefault(kind, []).append(ident)
    return found


def clean(conn: Connection, *, campaign: str | None = None) -> CleanReport:
    """Remove the objects the host's markers list (``campaign``'s only, if given), then the
    markers; safe to run any number of times."""
    report = CleanReport(conn.name)
    rec = read_markers(conn, campaign)
    if not rec.files:
        return report
    dirs = rec.of("dir")
    if dirs:
        out = conn.run(["sh", "-c", _KILL_NAMING, "nimo-kill", "\n".join(d + "/" for d in dirs)],
                       check=False, timeout=60).stdout
        report.processes = [int(p) for p in out.split() if p.isdigit()]
    report.mounts = _unmount(conn, rec.of("mount"), dirs)
    report.iptables = _delete_rules(conn, set(rec.of("rule")))
    for iface in rec.of("qdisc"):
        root = root_qdisc(conn, iface)
        if is_ours(root):
            for argv in NetworkSpec.teardown_cmds(iface):
                conn.run(argv, check=False, timeout=30)
            report.qdiscs.append(f"{iface}:{root.get('kind')}")
    if rec.of("cgroup"):
        gone = conn.run(["sh", "-c", _KILL_CG, "nimo-rmcg", *rec.of("cgroup")], timeout=120)
        report.cgroups = gone.stdout.split("\n")[:-1] if gone.stdout else []
    if dirs:
        out = conn.run(["sh", "-c", _EXISTING, "nimo-ls", *dirs], timeout=30).stdout
        report.dirs = out.split("\n")[:-1] if out else []
        if report.dirs:
            conn.run(["rm", "-rf", "--one-file-system", "--", *report.dirs], check=False,
                     timeout=120)
    report.parents = remove_empty_parents(conn, rec.of("parent"))
    conn.run(["rm", "-f", "--", *rec.files], check=False, timeout=30)
    return report


def remove_empty_parents(conn: Connection, parents: Sequence[str]) -> list[str]:
    """``rmdir`` the directories made as parents of work dirs, innermost first; one still
    holding anything (another run's dir, a user's file) stays. Returns the ones removed."""
    if not parents:
        return []
    order = sorted(set(parents), key=lambda d: d.count("/"), reverse=True)
    out = conn.run(["sh", "-c", _RMDIR_EMPTY, "nimo-rmdir", *order], check=False, timeout=30)
    return out.stdout.split("\n")[:-1] if out.stdout else []


def _unmount(conn: Connection, points: Sequence[str], dirs: Sequence[str]) -> list[str]:
    """Unmount what is mounted on a recorded mount point or inside a recorded dir."""
    removed = []
    text = conn.run(["cat", "/proc/mounts"], timeout=10).stdout
    for _, mnt, _ in reversed(proc_mounts(text)):  # innermost first
        if mnt in points or any(mnt == d or mnt.startswith(d + "/") for d in dirs):
            for argv in (["fusermount3", "-u", mnt], ["umount", "-l", mnt]):
                if conn.run(argv, check=False, timeout=30).exit_code == 0:
                    break
            removed.append(mnt)
    return removed


def _delete_rules(conn: Connection, comments: set[str]) -> list[str]:
    removed: list[str] = []
    if not comments:
        return removed
    res = conn.run(["iptables", "-w", "5", "-t", "mangle", "-S", "PREROUTING"], check=False,
                   timeout=30)
    for line in res.stdout.splitlines():
        if not line.startswith("-A PREROUTING "):
            continue
        tokens = shlex.split(line)[2:]
        comment = tokens[tokens.index("--comment") + 1] if "--comment" in tokens else ""
        if comment in comments:
            conn.run(iptables_cmd("-D", tokens), check=False, timeout=30)
            removed.append(line)
    return removed


def clean_inventory(path: str | Path, campaign: str | None = None,
                    log: ObjectLog | None = None) -> dict[str, CleanReport | BaseException]:
    """Run :func:`clean` on every host of an inventory file, concurrently (``campaign``'s
    objects only, if given; a host cleaned is then forgotten in ``log``, the store).
    Returns ``{host: report or the exception}``; never raises for a single unreachable
    host."""
    from workbench.inventory import load_inventory_hosts
    from workbench.remote.group import map_hosts

    hosts = load_inventory_hosts(Path(path))
    conns = [Connection.for_host(h, connect_timeout=5, retries=1) for h in hosts]
    try:
        reports = map_hosts(conns, lambda c: clean(c, campaign=campaign))
    finally:
        for c in conns:
            c.close()
    if log is not None and campaign is not None:
        for name, report in reports.items():
            if isinstance(report, CleanReport):
                log.forget_host_objects(campaign, host=name)
    return reports
