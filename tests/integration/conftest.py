"""Shared fixtures for lab integration tests: a session-scoped namespace lab.

The ``lab`` fixture builds a 3-host lab (1 storage + 2 compute) in a temp dir with a prefix
and subnet nobody else is using (so concurrent test sessions and a `nimo lab up` lab coexist),
and always tears it down. Tests using it are marked ``@pytest.mark.lab``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

LOCK_DIR = Path("/run/nimo-lab-locks")  # lab tests run as root: only root makes names here


def _lab_possible() -> str | None:
    if os.geteuid() != 0:
        return "the lab needs root"
    for tool in ("ip", "sshd", "tc", "iptables", "ssh-keyscan", "unshare"):
        if not any(Path(d, tool).exists() for d in os.environ.get("PATH", "").split(":")
                   + ["/usr/sbin", "/sbin"]):
            return f"{tool} not installed"
    return None


def _reap_stale(prefix: str) -> None:
    """Remove a lab left by a killed test session (namespaces, their processes, bridge) and
    what its campaigns left named after its hosts (dirs, cgroups, markers): the filesystem
    outlives the namespaces, and the next lab on this slot has the same host names."""
    import shutil

    from workbench.lab.netns import netns_list, netns_pids, remove_scoped, sh, terminate

    for ns in netns_list():
        if ns.startswith(prefix):
            terminate(netns_pids(ns))
            sh(["ip", "netns", "del", ns], check=False)
            shutil.rmtree(Path("/etc/netns") / ns, ignore_errors=True)
    if Path(f"/sys/class/net/{prefix}br0").exists():
        sh(["ip", "link", "del", f"{prefix}br0"], check=False)
    remove_scoped(f"{prefix}*")


@contextlib.contextmanager
def claim_lab_slot() -> Iterator[tuple[str, str]]:
    """Hold an exclusive (prefix, subnet base) slot for this process: ('nt3-', '10.203')."""
    env_prefix = os.environ.get("NIMO_TEST_LAB_PREFIX")
    if env_prefix:
        yield env_prefix, os.environ.get("NIMO_TEST_LAB_SUBNET", "10.199")
        return
    LOCK_DIR.mkdir(exist_ok=True)
    for n in range(50):
        f = open(LOCK_DIR / f"slot{n}.lock", "w")  # noqa: SIM115 - held for the session
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        prefix = f"nt{n}-"
        _reap_stale(prefix)  # we hold the slot's lock: whoever built that lab is gone
        try:
            yield prefix, f"10.{200 + n}"
        finally:
            f.close()
        return
    raise RuntimeError("no free lab slot")


@contextlib.contextmanager
def running_lab(tmp_path_factory: pytest.TempPathFactory, hosts: int = 3, slurm: bool = False):
    """Build a lab (with a Slurm cluster if ``slurm``) on a free (prefix, subnet) slot and
    always take it down."""
    reason = _lab_possible()
    if reason:
        pytest.skip(reason)
    from workbench.lab import Lab

    with claim_lab_slot() as (prefix, base):
        the_lab = Lab(tmp_path_factory.mktemp("slurm" if slurm else "lab") / "lab", hosts=hosts,
                      prefix=prefix, subnet_base=base, slurm=slurm)
        try:
            the_lab.up()
            yield the_lab
        finally:
            the_lab.down()


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """A running 3-host lab: ``.dir``, ``.inventory_path``, ``.hosts``, ``.known_hosts``,
    ``.key_file`` (see ``workbench.lab.Lab``)."""
    with running_lab(tmp_path_factory, hosts=3) as the_lab:
        yield the_lab


@pytest.fixture(scope="module")
def slurm_lab(tmp_path_factory: pytest.TempPathFactory):
    """A running 5-host lab with a Slurm cluster, one per test module that uses it."""
    with running_lab(tmp_path_factory, hosts=5, slurm=True) as the_lab:
        yield the_lab


@pytest.fixture
def compute(lab):
    """An open connection to compute1 (closed after the test)."""
    with lab.connect("compute1") as conn:
        yield conn


@pytest.fixture
def storage(lab):
    """An open connection to storage1 (closed after the test)."""
    with lab.connect("storage1") as conn:
        yield conn


def leftovers(conn, iface: str = "data0") -> dict[str, list[str]]:
    """Everything nimo- still present on a host (empty lists = clean), read over SSH."""
    from workbench.emulation.common import host_token

    token = host_token(conn)
    qd = conn.run(["tc", "qdisc", "show", "dev", iface]).stdout
    rules = conn.run(["iptables", "-w", "5", "-t", "mangle", "-S"]).stdout
    mounts = conn.run(["cat", "/proc/mounts"]).stdout
    cgs = conn.run(["sh", "-c", 'find /sys/fs/cgroup -maxdepth 6 -type d -name "nimo-*.$1"; true',
                    "x", token]).stdout
    dirs = conn.run(["sh", "-c", 'ls -d /tmp/nimo-*."$1" 2>/dev/null; true', "x", token]).stdout
    procs = conn.run(["sh", "-c", 'me=$(readlink /proc/self/ns/net); for d in /proc/[0-9]*; do '
                      '[ "$(readlink $d/ns/net 2>/dev/null)" = "$me" ] && '
                      'tr "\\0" " " < $d/cmdline 2>/dev/null && echo; done; true']).stdout
    found = {
        "qdiscs": [ln for ln in qd.splitlines() if any(k in ln for k in ("tbf", "netem", "htb"))],
        "iptables": [ln for ln in rules.splitlines() if "nimo-" in ln],
        "mounts": [ln for ln in mounts.splitlines() if "nimo-" in ln and "fuse" in ln],
        "cgroups": cgs.split(),
        "dirs": dirs.split(),
        "processes": [ln for ln in procs.splitlines()
                      if "nimo-delayer.py" in ln or "ganesha.nfsd -f /tmp/nimo-" in ln],
    }
    assert found.keys() == _SCRUB_BY_KIND.keys(), "scrub and leftovers list other kinds"
    return found


def assert_clean(conn, iface: str = "data0") -> None:
    """Fail listing whatever emulation state is left on the host."""
    left = {k: v for k, v in leftovers(conn, iface).items() if v}
    assert not left, f"{conn.name}: left behind: {left}"


# how the scrub removes each kind ``leftovers`` lists ($1: the host token); a kind added to
# one must be added to the other (``leftovers`` checks)
_SCRUB_BY_KIND = {
    "qdiscs": r"""for q in $(ls /sys/class/net | grep '^data'); do
  tc qdisc show dev "$q" | grep -qE 'tbf|netem|htb' && tc qdisc del dev "$q" root
done""",
    "iptables": r"""iptables -w 5 -t mangle -S | grep -- 'nimo-' | grep '^-A' | sed 's/^-A/-D/' |
  while read -r r; do eval "iptables -w 5 -t mangle $r"; done
iptables -w 5 -t mangle -S | grep '^-N nimo-' | while read -r _ c; do
  iptables -w 5 -t mangle -F "$c"; iptables -w 5 -t mangle -X "$c"; done""",
    "mounts": r"""grep fuse /proc/mounts | awk '{print $2}' | grep nimo- | while read -r m; do
  fusermount -uz "$m" 2>/dev/null || umount -l "$m"; done""",
    # [x]: the pattern must not match this sh itself
    "processes": r"pkill -f 'nimo-[d]elayer[.]py'; pkill -f 'ganesha[.]nfsd -f /tmp/nimo-'",
    "cgroups": r"""find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -depth -type d -name "nimo-*.$1" \
  -exec rmdir {} \;""",
    "dirs": r'rm -rf /tmp/nimo-*."$1"',
}
_SCRUB = "\n".join([*_SCRUB_BY_KIND.values(), "true"])


def scrub(conn) -> None:
    """Remove every nimo- object ``leftovers`` would list (the next test starts clean)."""
    from workbench.emulation.common import host_token

    conn.run(["sh", "-c", _SCRUB, "x", host_token(conn)], timeout=60, check=False)


@pytest.fixture(autouse=True)
def _leftovers_stay_with_their_test(request):
    """After a test on the shared lab, whatever it left is reported (a warning naming the
    test) and scrubbed, so one test's leak fails that test only, not every later one."""
    yield
    if "lab" not in request.fixturenames:
        return
    import warnings

    the_lab = request.getfixturevalue("lab")
    for name, left in lab_leftovers(the_lab).items():
        warnings.warn(f"{request.node.nodeid} left on {name}: {left}", stacklevel=1)
        with the_lab.connect(name) as conn:
            scrub(conn)


def lab_leftovers(the_lab) -> dict[str, dict[str, list[str]]]:
    """{host: what ``leftovers`` finds on any of its data interfaces}, hosts with any only."""
    found = {}
    for host in the_lab.hosts:
        with the_lab.connect(host.name) as conn:
            ifaces = conn.run(["sh", "-c", "ls /sys/class/net | grep '^data'; true"]).stdout
            left = {k: v for iface in ifaces.split() or ["data0"]
                    for k, v in leftovers(conn, iface).items() if v}
        if left:
            found[host.name] = left
    return found


@pytest.fixture(name="assert_clean")
def _assert_clean_fixture():
    """``assert_clean(conn, iface="data0")``: fail if any nimo- emulation state is left."""
    return assert_clean


@pytest.fixture(name="leftovers")
def _leftovers_fixture():
    """``leftovers(conn, iface="data0") -> {kind: [items]}``."""
    return leftovers


@pytest.fixture
def lab_slot():
    """A free (prefix, subnet base) for building an extra lab inside a test."""
    with claim_lab_slot() as slot:
        yield slot


def lab_inventory(lab, tmp_path: Path, app: str, size_mb: float, *, dataset: str | None = None,
                  name: str | None = None, **changes) -> str:
    """The lab's inventory with a shipped app (its dataset dir ``dataset``, default
    APP-SIZE) and top-level keys replaced by ``changes``; written to tmp_path/NAME.yaml."""
    import yaml

    from workbench.apps import APPS

    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    doc["application"] = APPS[app].application(size_mb, timeout_s=60)
    doc["application"]["dataset"]["path"] = dataset or f"{app}-{size_mb:g}"
    for key, value in changes.items():
        doc[key] = value
    path = tmp_path / f"{name or app}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


FIXED_RUNS_DESIGN = """\
name: {name}
strategy: nimo
sampling: lmax_i1+uncertainty
reference: min
predictor_order: pbdf
traversal: round_robin
attribute_order: pbdf
error: loo
predictors: {{}}
stop: {{error_pct: 0.01, min_samples: 5, max_runs: {max_runs}}}
"""
SMALL_KNOBS = [  # three knobs of three levels: short runs of the lab's shipped apps
    {"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 0.75, 1.0]},
    {"name": "delay_ms", "kind": "delay_ms", "levels": [0, 2, 5]},
    {"name": "rate_mbit", "kind": "rate_mbit", "levels": [100, 200, 400]},
]


def fixed_runs_design(name: str, max_runs: int) -> str:
    """A design that makes exactly ``max_runs`` runs (its error target is out of reach),
    with the paper's cheap planner: for tests about running, not learning."""
    return FIXED_RUNS_DESIGN.format(name=name, max_runs=max_runs)


def campaign_in_db(db: Path, name: str) -> bool:
    """Whether SQLite store ``db`` (written by another process) holds campaign ``name`` yet."""
    if not db.exists():
        return False
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT 1 FROM nimo_campaigns WHERE name = ?",
                               (name,)).fetchone() is not None
    except sqlite3.Error:
        return False


def _sshd_pids(netns: str) -> list[int]:
    from workbench.lab.netns import netns_pids

    pids = []
    for pid in netns_pids(netns):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().startswith("sshd"):
                pids.append(pid)
    return pids


@contextlib.contextmanager
def frozen(the_lab, name: str) -> Iterator[None]:
    """Every sshd process of lab host ``name`` stopped (SIGSTOP: a frozen host, as SSH sees
    it) while inside."""
    import signal

    pids = _sshd_pids(the_lab.host(name).netns)
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@pytest.fixture
def freeze(lab):
    """``freeze(name)``: a context manager in which lab host ``name`` is frozen."""
    return lambda name: frozen(lab, name)

