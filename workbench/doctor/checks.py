"""What ``nimo doctor`` checks on a host, as data: each ``Check`` has the argv it runs on the
host (built from the host and inventory) and a pure ``parse`` of the result into a level
(``ok``, ``warn``, ``blocker``) and a one-line detail. ``applies`` says whether the
inventory needs it on that host (e.g. tshark only with ``monitors.tshark``).

To add a check: one ``Check`` in ``CHECKS``; its parse is unit-tested on canned output
(``workbench.testing.FakeConnection``). Nothing here changes a host: the qdisc probe adds
its qdisc in a throw-away network namespace (``unshare -n``) that vanishes with the command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from workbench.emulation.cgroups import _DETECT_SCRIPT, parse_layout
from workbench.errors import EmulationError
from workbench.inventory import Host, Inventory
from workbench.monitors.sysstat import SADC_CANDIDATES
from workbench.remote import CommandResult

OK, WARN, BLOCKER = "ok", "warn", "blocker"
LEVELS = (OK, WARN, BLOCKER)
MIN_FREE_MB = 100.0
LOW_FREE_MB = 1024.0
MAX_SKEW_S = 2.0
NOT_FOUND = 127


@dataclass(frozen=True)
class Context:
    """A host, its inventory, and (for the clock) the local time around the command."""

    host: Host
    inventory: Inventory
    local_time: float = 0.0

    @property
    def knob_kinds(self) -> set[str]:
        return {k.kind for k in self.inventory.knobs}

    @property
    def compute(self) -> bool:
        return self.host.role == "compute"


Verdict = tuple[str, str]  # (level, detail)


@dataclass(frozen=True)
class Check:
    """One check: ``argv(ctx)`` runs on the host, ``parse(result, ctx)`` judges it."""

    name: str
    argv: Callable[[Context], Sequence[str]]
    parse: Callable[[CommandResult, Context], Verdict]
    applies: Callable[[Context], bool] = field(default=lambda ctx: True)
    timeout_s: float = 20.0


def _missing(r: CommandResult, what: str, why: str) -> Verdict | None:
    if r.exit_code == NOT_FOUND or "not found" in r.stderr:
        return BLOCKER, f"{what} not found ({why})"
    return None


# -- root ----------------------------------------------------------------------------------
ROOT_SCRIPT = 'id -u; sudo -n true 2>/dev/null && echo sudo; exit 0'


def parse_root(r: CommandResult, ctx: Context) -> Verdict:
    lines = r.stdout.split()
    if lines[:1] == ["0"]:
        return OK, f"root ({ctx.host.user})"
    sudo = ", passwordless sudo exists but nimo does not use it" if "sudo" in lines else ""
    return BLOCKER, (f"{ctx.host.user} is uid {lines[0] if lines else '?'}{sudo}; tc, cgroups "
                     "and mounts need root: connect as root (hosts[].user)")


# -- python3 and the delay fallback --------------------------------------------------------
PY_VERSION = "import sys; print('%d.%d.%d' % sys.version_info[:3])"


def parse_python(r: CommandResult, ctx: Context) -> Verdict:
    missing = _missing(r, "python3", "the shipped applications and the delay fallback run it")
    if missing or not r.ok:
        return missing or (BLOCKER, f"python3 failed: {r.stderr.strip()[-200:]}")
    version = r.stdout.strip()
    major_minor = tuple(int(p) for p in version.split(".")[:2])
    if major_minor < (3, 8):
        return WARN, f"python3 {version} (3.8 or later is tested)"
    return OK, f"python3 {version}"


DELAY_SCRIPT = (
    'if unshare -n tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then echo netem=yes; '
    'else echo netem=no; fi; '
    'python3 -c "import netfilterqueue" 2>/dev/null && echo nfqueue=yes || echo nfqueue=no; '
    'command -v iptables >/dev/null && echo iptables=yes || echo iptables=no'
)


def _flags(text: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in text.split() if "=" in p)


def parse_delay(r: CommandResult, ctx: Context) -> Verdict:
    f = _flags(r.stdout)
    if f.get("netem") == "yes":
        return OK, "tc netem"
    if f.get("nfqueue") == "yes" and f.get("iptables") == "yes":
        return OK, "no netem in the kernel; the NFQUEUE delayer (python3 NetfilterQueue)"
    lacks = [w for k, w in (("nfqueue", "python3 with NetfilterQueue"),
                            ("iptables", "iptables")) if f.get(k) != "yes"]
    return BLOCKER, ("delay_ms needs tc netem or the NFQUEUE fallback: no netem in the kernel "
                     f"and no {' or '.join(lacks)} (pip install NetfilterQueue)")


# -- tc and qdisc kinds --------------------------------------------------------------------
QDISC_SCRIPT = (
    'command -v tc >/dev/null || { echo "tc: not found" >&2; exit 127; }; '
    'command -v unshare >/dev/null || { echo unshare=no; exit 0; }; '
    'if unshare -n tc qdisc add dev lo root tbf rate 1mbit burst 32kbit latency 50ms '
    '2>/dev/null; then echo tbf=yes; else echo tbf=no; fi'
)


def parse_tc(r: CommandResult, ctx: Context) -> Verdict:
    missing = _missing(r, "tc", "bandwidth and delay are shaped with it (iproute2)")
    if missing:
        return missing
    f = _flags(r.stdout)
    if "rate_mbit" not in ctx.knob_kinds:
        return OK, "tc (no rate_mbit knob: tbf not needed)"
    if f.get("unshare") == "no":
        return WARN, "tc present; tbf support not probed (no unshare on the host)"
    if f.get("tbf") == "yes":
        return OK, "tc with tbf"
    return BLOCKER, "rate_mbit needs the tbf qdisc, which this kernel refuses (sch_tbf)"


def _shapes(ctx: Context) -> bool:
    return bool(ctx.knob_kinds & {"delay_ms", "rate_mbit"})


# -- cgroups -------------------------------------------------------------------------------
def parse_cgroups(r: CommandResult, ctx: Context) -> Verdict:
    try:
        layout = parse_layout(r.stdout)
    except EmulationError as e:
        return BLOCKER, f"{e.message} ({e.hint})" if e.hint else e.message
    ctrls = "cpu, memory" if layout.version == 2 else "cpu, cpuacct, memory"
    return OK, f"cgroup v{layout.version} ({ctrls})"


# -- monitors ------------------------------------------------------------------------------
SYSSTAT_SCRIPT = (
    'for p; do [ -x "$p" ] && { echo "sadc=$p"; break; }; done; '
    'command -v sadf >/dev/null && echo sadf=yes || echo sadf=no'
)


def parse_sysstat(r: CommandResult, ctx: Context) -> Verdict:
    f = _flags(r.stdout)
    lacks = [w for w, ok in (("sadc", "sadc" in f), ("sadf", f.get("sadf") == "yes")) if not ok]
    if lacks:
        return BLOCKER, (f"{' and '.join(lacks)} not found (monitors.sar: install sysstat, "
                         "or set monitors.sar: false)")
    return OK, f"sadc {f['sadc']}, sadf"


CAPTURE_SCRIPT = (
    'for t in tshark dumpcap; do command -v "$t" >/dev/null && echo "$t=yes" || '
    'echo "$t=no"; done'
)


def parse_capture(r: CommandResult, ctx: Context) -> Verdict:
    f = _flags(r.stdout)
    lacks = [t for t in ("tshark", "dumpcap") if f.get(t) != "yes"]
    if lacks:
        return BLOCKER, (f"{' and '.join(lacks)} not found (monitors.tshark: install tshark, "
                         "or set monitors.tshark: false)")
    return OK, "tshark, dumpcap"


# -- storage client ------------------------------------------------------------------------
STORAGE_SCRIPT = (
    'command -v sshfs >/dev/null && [ -e /dev/fuse ] && '
    '{ command -v fusermount3 >/dev/null || command -v fusermount >/dev/null; } '
    '&& echo sshfs=yes || echo sshfs=no; '
    '{ command -v mount.nfs >/dev/null || [ -x /sbin/mount.nfs ]; } '
    '&& echo nfs=yes || echo nfs=no; '
    'command -v ganesha.nfsd >/dev/null && echo ganesha=yes || echo ganesha=no'
)


def parse_storage(r: CommandResult, ctx: Context) -> Verdict:
    f = _flags(r.stdout)
    method = ctx.inventory.storage.method
    if not ctx.compute:
        if method == "nfs" and f.get("ganesha") != "yes":
            return BLOCKER, "storage.method nfs needs ganesha.nfsd on the storage host"
        return OK, "serves the export over SSH" + (
            ", ganesha.nfsd" if f.get("ganesha") == "yes" else "")
    have = [m for m in ("sshfs", "nfs") if f.get(m) == "yes"]
    wanted = ("sshfs", "nfs") if method == "auto" else (method,)
    usable = [m for m in wanted if m in have]
    if usable:
        return OK, f"{' and '.join(usable)} client" + (
            " (storage.method auto)" if method == "auto" else "")
    need = {"sshfs": "sshfs with /dev/fuse and fusermount", "nfs": "mount.nfs (nfs-common)"}
    return BLOCKER, (f"storage.method {method} needs "
                     f"{' or '.join(need[m] for m in wanted)} on the compute host")


# -- free space ----------------------------------------------------------------------------
DF_SCRIPT = (
    'for p; do q="$p"; while [ ! -e "$q" ]; do q=$(dirname "$q"); done; '
    'printf "%s " "$p"; df -Pk "$q" | awk "NR==2 {print \\$4}"; done'
)


def work_dirs(ctx: Context) -> list[str]:
    if ctx.compute:
        return [ctx.inventory.application.workdir, "/tmp"]
    return [ctx.inventory.storage.export, "/tmp"]


def parse_disk(r: CommandResult, ctx: Context) -> Verdict:
    free: dict[str, float] = {}
    for line in r.stdout.splitlines():
        path, _, kb = line.rpartition(" ")
        if path and kb.strip().isdigit():
            free[path] = int(kb) / 1024.0
    if not free:
        return WARN, f"free space unknown (df printed {r.stdout.strip()[:80]!r})"
    need = MIN_FREE_MB
    if not ctx.compute and ctx.inventory.application.dataset.size_mb:
        need += float(ctx.inventory.application.dataset.size_mb)
    shown = ", ".join(f"{p} {mb:.0f} MB free" for p, mb in free.items())
    low = [p for p, mb in free.items() if mb < need]
    if low:
        return BLOCKER, f"{shown}: below {need:.0f} MB at {', '.join(low)}"
    if any(mb < LOW_FREE_MB for mb in free.values()):
        return WARN, f"{shown} (below 1 GB)"
    return OK, shown


# -- clock ---------------------------------------------------------------------------------
def parse_clock(r: CommandResult, ctx: Context) -> Verdict:
    try:
        remote = float(r.stdout.strip())
    except ValueError:
        return WARN, f"clock unreadable ({r.stdout.strip()[:40]!r})"
    skew = remote - ctx.local_time
    if abs(skew) > MAX_SKEW_S:
        return WARN, (f"clock {skew:+.1f} s off this machine's: run times are measured on the "
                      "host, but timestamps of runs and monitors disagree (use NTP)")
    return OK, f"skew {skew:+.2f} s"


def _static(*argv: str) -> Callable[[Context], Sequence[str]]:
    return lambda ctx: argv


CHECKS: tuple[Check, ...] = (
    Check("root", _static("sh", "-c", ROOT_SCRIPT), parse_root),
    Check("python3", _static("python3", "-c", PY_VERSION), parse_python),
    Check("delay", _static("sh", "-c", DELAY_SCRIPT), parse_delay,
          lambda ctx: "delay_ms" in ctx.knob_kinds),
    Check("tc", _static("sh", "-c", QDISC_SCRIPT), parse_tc, _shapes),
    Check("cgroups", _static("sh", "-c", _DETECT_SCRIPT), parse_cgroups,
          lambda ctx: ctx.compute),
    Check("sysstat", _static("sh", "-c", SYSSTAT_SCRIPT, "nimo-sadc", *SADC_CANDIDATES),
          parse_sysstat, lambda ctx: ctx.inventory.monitors.sar),
    Check("tshark", _static("sh", "-c", CAPTURE_SCRIPT), parse_capture,
          lambda ctx: ctx.inventory.monitors.tshark),
    Check("storage", _static("sh", "-c", STORAGE_SCRIPT), parse_storage),
    Check("disk", lambda ctx: ["sh", "-c", DF_SCRIPT, "nimo-df", *work_dirs(ctx)], parse_disk),
    Check("clock", _static("date", "+%s.%N"), parse_clock),
)
