"""CPU and memory limits with cgroups (v2 ``cpu.max``/``memory.max`` or v1 CFS quota and
``memory.limit_in_bytes``), detected per host.

``CgroupSpec`` is pure data; ``create_cgroup`` applies it (mkdir, write, read back) and
``Cgroup.remove`` kills every member and removes the directories.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from workbench.emulation.common import read_files, run_checked, scope_name
from workbench.emulation.hostobjects import record
from workbench.errors import EmulationError
from workbench.remote.connection import Connection
from workbench.retry import until_done

V1_CONTROLLERS = ("cpu", "cpuacct", "memory")

_DETECT_SCRIPT = (
    "cat /proc/self/mounts; echo '--- cgroup'; cat /proc/self/cgroup; echo '--- v2'; "
    "awk '$3==\"cgroup2\"{print $2}' /proc/self/mounts | while read -r m; do "
    'printf "%s " "$m"; cat "$m/cgroup.controllers" 2>/dev/null || echo; done'
)
# Enter every listed cgroup, then exec the command: sh -c SCRIPT nimo-cg N FILE1..FILEN CMD...
ENTER_SCRIPT = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; '
    'exec "$@"'
)
# Empty every directory (SIGKILL members), then rmdir it: sh -c SCRIPT nimo-rmcg DIR...
_REMOVE_SCRIPT = (
    'for d; do for i in $(seq 100); do p=$(cat "$d/cgroup.procs" 2>/dev/null); '
    '[ -z "$p" ] && break; kill -KILL $p 2>/dev/null; sleep 0.02; done; '
    'for i in $(seq 50); do [ -d "$d" ] || break; rmdir "$d" 2>/dev/null && break; '
    'sleep 0.02; done; [ -d "$d" ] && { echo "cannot remove $d" >&2; exit 1; }; done; exit 0'
)
_MKDIR_WRITE_SCRIPT = (  # sh -c SCRIPT nimo-cgset N DIR1..DIRN FILE VALUE FILE VALUE ...
    'set -e; n=$1; shift; while [ "$n" -gt 0 ]; do mkdir -p "$1"; shift; n=$((n-1)); done; '
    'while [ "$#" -gt 1 ]; do printf "%s\\n" "$2" > "$1"; shift 2; done'
)
_layouts: weakref.WeakKeyDictionary[Connection, CgroupLayout] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class CgroupSpec:
    """Limits for one run: ``cpus`` CPUs of quota (0.5 = half of one CPU, 2 = two CPUs) and
    ``memory_mb`` of memory; ``None`` leaves a resource unlimited (but still accounted).

    ``weight`` (1..10000, cgroup v2 units, default 100 = the kernel default) raises the run's
    CPU priority against other load on a shared host, so the quota is what limits it.
    """

    cpus: float | None = None
    memory_mb: float | None = None
    period_us: int = 100_000
    weight: int | None = None

    def __post_init__(self) -> None:
        if self.cpus is not None and not self.cpus > 0:
            raise EmulationError(f"cpus must be > 0, got {self.cpus}")
        if self.memory_mb is not None and not self.memory_mb > 0:
            raise EmulationError(f"memory_mb must be > 0, got {self.memory_mb}")
        if self.weight is not None and not 1 <= self.weight <= 10_000:
            raise EmulationError(f"weight must be in 1..10000, got {self.weight}")
        if not 1000 <= self.period_us <= 1_000_000:
            raise EmulationError(f"period_us must be in 1000..1000000, got {self.period_us}")

    def quota_us(self) -> int | None:
        """CFS quota per period in microseconds (``None`` = unlimited)."""
        if self.cpus is None:
            return None
        return max(1000, round(self.cpus * self.period_us))

    def memory_bytes(self) -> int | None:
        """Memory limit in bytes (``None`` = unlimited)."""
        return None if self.memory_mb is None else int(self.memory_mb * 1024 * 1024)

    def v1_writes(self, paths: dict[str, str]) -> list[tuple[str, str]]:
        """(file, value) writes for cgroup v1 directories keyed by controller."""
        quota = self.quota_us()
        writes = [
            (f"{paths['cpu']}/cpu.cfs_period_us", str(self.period_us)),
            (f"{paths['cpu']}/cpu.cfs_quota_us", "-1" if quota is None else str(quota)),
        ]
        if self.weight is not None:
            shares = max(2, min(262_144, self.weight * 1024 // 100))
            writes.append((f"{paths['cpu']}/cpu.shares", str(shares)))
        mem = self.memory_bytes()
        if mem is not None:
            writes.append((f"{paths['memory']}/memory.limit_in_bytes", str(mem)))
        return writes

    def v2_writes(self, path: str) -> list[tuple[str, str]]:
        """(file, value) writes for one cgroup v2 directory."""
        quota = self.quota_us()
        mem = self.memory_bytes()
        writes = [
            (f"{path}/cpu.max", f"{'max' if quota is None else quota} {self.period_us}"),
            (f"{path}/memory.max", "max" if mem is None else str(mem)),
        ]
        if self.weight is not None:
            writes.append((f"{path}/cpu.weight", str(self.weight)))
        return writes


@dataclass(frozen=True)
class CgroupLayout:
    """Where a host's cgroups live: ``version`` 1 or 2, ``mounts`` controller -> mount point
    (v2: key ``"unified"``), ``own`` controller -> the login shell's cgroup path."""

    version: int
    mounts: dict[str, str]
    own: dict[str, str] = field(default_factory=dict)

    def parent_dirs(self) -> dict[str, str]:
        """Directories under which run cgroups are created (keyed like ``mounts``)."""
        if self.version == 2:
            return {"unified": self.mounts["unified"]}
        out = {}
        for c in V1_CONTROLLERS:
            rel = self.own.get(c, "/").rstrip("/")
            out[c] = self.mounts[c] + rel
        return out


def parse_layout(text: str) -> CgroupLayout:
    """Parse the output of the detection script (pure; unit-tested)."""
    mounts_part, _, rest = text.partition("--- cgroup\n")
    cgroup_part, _, v2_part = rest.partition("--- v2\n")
    v1: dict[str, str] = {}
    for line in mounts_part.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "cgroup":
            for opt in f[3].split(","):
                if opt in V1_CONTROLLERS:
                    v1[opt] = f[1]
    own: dict[str, str] = {}
    for line in cgroup_part.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for c in parts[1].split(",") if parts[1] else ["unified"]:
                own[c] = parts[2]
    for line in v2_part.splitlines():
        mp, _, ctrls = line.partition(" ")
        if {"cpu", "memory"} <= set(ctrls.split()):
            return CgroupLayout(2, {"unified": mp}, own)
    if all(c in v1 for c in V1_CONTROLLERS):
        return CgroupLayout(1, v1, own)
    raise EmulationError(
        "no usable cgroups: need cgroup v2 with cpu+memory or v1 cpu, cpuacct and memory",
        hint=f"found v1 controllers {sorted(v1)}",
    )


def detect_cgroups(conn: Connection, *, refresh: bool = False) -> CgroupLayout:
    """Detect the host's cgroup version and mount points (as seen by its sshd); cached per
    connection unless ``refresh``."""
    layout = None if refresh else _layouts.get(conn)
    if layout is None:
        layout = parse_layout(conn.run(["sh", "-c", _DETECT_SCRIPT], timeout=30).stdout)
        _layouts[conn] = layout
    return layout


@dataclass(frozen=True)
class CgroupUsage:
    """Accounting of a run's cgroup: CPU time, throttling and OOM kills."""

    cpu_s: float
    nr_periods: int
    nr_throttled: int
    throttled_s: float
    oom_kills: int
    memory_peak_bytes: int | None


def _kv(lines: list[str] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in lines or []:
        k, _, v = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[k] = int(v)
    return out


class Cgroup:
    """A created run cgroup (one directory per v1 controller, or one v2 directory)."""

    def __init__(
        self, conn: Connection, name: str, layout: CgroupLayout, spec: CgroupSpec
    ) -> None:
        self.conn = conn
        self.name = name
        self.layout = layout
        self.spec = spec
        self.paths = {k: f"{d}/{name}" for k, d in layout.parent_dirs().items()}

    def __repr__(self) -> str:
        return f"Cgroup({self.conn.name}:{self.name}, v{self.layout.version}, {self.spec})"

    def procs_files(self) -> list[str]:
        return [f"{p}/cgroup.procs" for p in self.paths.values()]

    def prefix(self, argv: Sequence[str]) -> list[str]:
        """argv that starts ``argv`` inside this cgroup (the shell only sees fixed text)."""
        files = self.procs_files()
        return ["sh", "-c", ENTER_SCRIPT, "nimo-cg", str(len(files)), *files, *argv]

    def apply(self) -> None:
        """Create the directories, write the limits and verify them by reading back."""
        dirs = list(self.paths.values())
        enable: list[tuple[str, str]] = []
        if self.layout.version == 2:
            writes = self.spec.v2_writes(self.paths["unified"])
            # v2 only offers cpu.max/memory.max in a child if the parent delegates them
            parent = self.layout.parent_dirs()["unified"]
            enable = [(f"{parent}/cgroup.subtree_control", "+cpu +memory")]
        else:
            writes = self.spec.v1_writes(self.paths)
        flat = [x for pair in enable + writes for x in pair]
        run_checked(self.conn, ["sh", "-c", _MKDIR_WRITE_SCRIPT, "nimo-cgset", str(len(dirs)),
                                *dirs, *flat], f"creating cgroup {self.name}")
        got = read_files(self.conn, [p for p, _ in writes])
        for path, want in writes:
            have = (got.get(path) or ["<missing>"])[0].strip()
            if not _same_limit(have, want):
                raise EmulationError(f"{self.conn.name}: {path} reads {have!r}, wrote {want!r}")

    def usage(self) -> CgroupUsage:
        """Read CPU time, throttling and OOM counters."""
        if self.layout.version == 2:
            p = self.paths["unified"]
            files = [f"{p}/cpu.stat", f"{p}/memory.events", f"{p}/memory.peak"]
            got = read_files(self.conn, files)
            cpu = _kv(got.get(files[0]))
            ev = _kv(got.get(files[1]))
            peak = got.get(files[2])
            return CgroupUsage(
                cpu.get("usage_usec", 0) / 1e6,
                cpu.get("nr_periods", 0),
                cpu.get("nr_throttled", 0),
                cpu.get("throttled_usec", 0) / 1e6,
                ev.get("oom_kill", 0),
                int(peak[0]) if peak else None,
            )
        files = [
            f"{self.paths['cpuacct']}/cpuacct.usage",
            f"{self.paths['cpu']}/cpu.stat",
            f"{self.paths['memory']}/memory.oom_control",
            f"{self.paths['memory']}/memory.max_usage_in_bytes",
        ]
        got = read_files(self.conn, files)
        usage = got.get(files[0]) or ["0"]
        cpu = _kv(got.get(files[1]))
        oom = _kv(got.get(files[2]))
        peak = got.get(files[3])
        return CgroupUsage(
            int(usage[0]) / 1e9,
            cpu.get("nr_periods", 0),
            cpu.get("nr_throttled", 0),
            cpu.get("throttled_time", 0) / 1e9,
            oom.get("oom_kill", 0),
            int(peak[0]) if peak else None,
        )

    def remove(self) -> None:
        """Kill all members and remove the directories; verified, idempotent."""
        run_checked(
            self.conn, ["sh", "-c", _REMOVE_SCRIPT, "nimo-rmcg", *self.paths.values()],
            f"removing cgroup {self.name}",
        )


def _same_limit(have: str, want: str) -> bool:
    if have == want:
        return True
    h, w = have.split(), want.split()
    if len(h) == len(w) == 1 and h[0].isdigit() and w[0].isdigit():
        # the kernel rounds memory limits to pages
        return abs(int(h[0]) - int(w[0])) <= 4096
    return False


def create_cgroup(conn: Connection, spec: CgroupSpec, *, run_id: str) -> Cgroup:
    """Create ``nimo-<run_id>.<host>`` with ``spec`` applied and verified; caller removes it."""
    layout = detect_cgroups(conn)
    cg = Cgroup(conn, scope_name(conn, run_id), layout, spec)
    record(conn, run_id, [("cgroup", p) for p in cg.paths.values()])
    try:
        cg.apply()
    except BaseException:
        with contextlib.suppress(Exception):
            cg.remove()
        raise
    return cg


@contextlib.contextmanager
def cgroup_applied(conn: Connection, spec: CgroupSpec, *, run_id: str) -> Iterator[Cgroup]:
    """Context manager: create the run cgroup, yield it, always kill members and remove it."""
    cg = create_cgroup(conn, spec, run_id=run_id)
    try:
        yield cg
    finally:
        _remove_retrying(cg)


def _remove_retrying(cg: Cgroup, attempts: int = 3) -> None:
    error = until_done(cg.remove, attempts)
    if error is not None:
        raise error
