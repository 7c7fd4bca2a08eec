"""Network emulation on the compute<->storage data link.

Bandwidth: a tbf on each end's egress. Delay (``delay_ms`` = added round-trip time): each end
adds half, with netem on its egress where ``tc qdisc ... netem`` works on that host, otherwise
with the NFQUEUE fallback on its ingress (iptables mangle PREROUTING -> NFQUEUE
--queue-bypass, drained by ``delayer.py`` which holds packets FIFO for the delay).
"""

from __future__ import annotations

import contextlib
import json
import time
import weakref
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from workbench.emulation.common import run_checked, scope_name
from workbench.emulation.datapath import QDISC_HANDLE, check_shapeable, is_ours, root_qdisc
from workbench.emulation.hostobjects import private_dir, put_atomic, record
from workbench.errors import EmulationError, RemoteCommandFailed
from workbench.remote.connection import Connection, RemoteProcess
from workbench.remote.group import run_parallel

DELAYER_SOURCE = Path(__file__).with_name("delayer.py")
NETEM_LIMIT = 100_000
# The tbf sits on the sender's own egress: a packet it drops is a local drop, and a TCP
# sender that starts fast (BBR's start-up) overflows a 50 ms queue at slow rates. The
# retransmissions and timeouts (~0.26 s each) made a 4 MB read at 25 Mbit/s take 1.44-2.68 s
# over 12 repeats of one assignment on the lab (session 63); with a 1 MiB queue 1.44-1.51 s.
QUEUE_MIN_BYTES = 1 << 20
SHAPING_QDISCS = ("tbf", "netem", "htb")  # root qdiscs the emulation may install
_NO_NETEM = ("unknown qdisc", "qdisc kind is unknown", "no such file or directory")
_netem_ok: weakref.WeakKeyDictionary[Connection, bool] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class NetworkSpec:
    """Link conditions: ``delay_ms`` added round-trip time, ``rate_mbit`` per-direction cap."""

    delay_ms: float = 0.0
    rate_mbit: float | None = None

    def __post_init__(self) -> None:
        if self.delay_ms < 0:
            raise EmulationError(f"delay_ms must be >= 0, got {self.delay_ms}")
        if self.rate_mbit is not None and not self.rate_mbit > 0:
            raise EmulationError(f"rate_mbit must be > 0, got {self.rate_mbit}")

    @property
    def is_noop(self) -> bool:
        return self.delay_ms == 0 and self.rate_mbit is None

    def rate_kbit(self) -> int | None:
        return None if self.rate_mbit is None else max(8, round(self.rate_mbit * 1000))

    def burst_bytes(self) -> int:
        """tbf bucket: 4 ms of traffic, at least 32 KiB (enough for GSO segments)."""
        kbit = self.rate_kbit() or 0
        return max(32 * 1024, kbit * 1000 // 8 // 250)

    def queue_bytes(self) -> int:
        """tbf queue: 50 ms of traffic beyond the bucket, at least QUEUE_MIN_BYTES."""
        kbit = self.rate_kbit() or 0
        return max(QUEUE_MIN_BYTES, self.burst_bytes() + kbit * 1000 // 8 // 20)

    def rate_cmds(self, iface: str) -> list[list[str]]:
        """tc argv lists that cap ``iface``'s egress at ``rate_mbit`` (tbf, nimo's handle)."""
        kbit = self.rate_kbit()
        if kbit is None:
            return []
        return [[
            "tc", "qdisc", "replace", "dev", iface, "root", "handle", QDISC_HANDLE, "tbf",
            "rate", f"{kbit}kbit", "burst", str(self.burst_bytes()),
            "limit", str(self.queue_bytes()),
        ]]

    def netem_cmds(self, iface: str, delay_ms: float) -> list[list[str]]:
        """tc argv lists adding ``delay_ms`` of egress delay with netem (under the tbf if any)."""
        where = (["parent", f"{QDISC_HANDLE}1", "handle", "10:"] if self.rate_mbit
                 else ["root", "handle", QDISC_HANDLE])
        verb = "add" if self.rate_mbit else "replace"
        return [[
            "tc", "qdisc", verb, "dev", iface, *where, "netem",
            "delay", f"{delay_ms:.3f}ms", "limit", str(NETEM_LIMIT),
        ]]

    @staticmethod
    def teardown_cmds(iface: str) -> list[list[str]]:
        """tc argv lists restoring the default qdisc on ``iface``."""
        return [["tc", "qdisc", "del", "dev", iface, "root"]]


def nfqueue_rule(iface: str, peer: str, queue_num: int, comment: str) -> list[str]:
    """iptables rule body (after ``-A/-D PREROUTING``) queueing ``peer``'s packets on ``iface``."""
    return [
        "-i", iface, "-s", peer, "-m", "comment", "--comment", comment,
        "-j", "NFQUEUE", "--queue-num", str(queue_num), "--queue-bypass",
    ]


def iptables_cmd(action: str, rule: Sequence[str]) -> list[str]:
    """``iptables -w -t mangle -A|-D|-C PREROUTING <rule>``."""
    return ["iptables", "-w", "5", "-t", "mangle", action, "PREROUTING", *rule]


def queue_number(name: str, iface: str) -> int:
    """Deterministic NFQUEUE number for a run on an interface (1000..60999)."""
    return 1000 + zlib.crc32(f"{name}/{iface}".encode()) % 60000


@dataclass(frozen=True)
class LinkEnd:
    """One end of a data link: the host's connection, its data interface and the peer's
    data-path address (the source of the packets this end receives).

    ``iface`` is checked against the host's route to ``peer_address``; when they differ (a
    storage host with one link per compute host) the routed interface is used and recorded.
    """

    conn: Connection
    iface: str
    peer_address: str


@dataclass(frozen=True)
class EndRecord:
    """What was applied on one end."""

    host: str
    iface: str
    delay_method: str  # "none" | "netem" | "nfqueue"
    delay_ms: float
    rate_mbit: float | None
    queue_num: int | None = None


@dataclass
class NetworkRecord:
    """Record of one network emulation: per-end methods and the time spent."""

    spec: NetworkSpec
    ends: tuple[EndRecord, ...] = ()
    apply_s: float = 0.0
    teardown_s: float = 0.0


@dataclass
class _EndState:
    end: LinkEnd
    name: str
    run_id: str
    qdisc: bool = False
    rule: list[str] | None = None
    workdir: str | None = None
    delayer: RemoteProcess | None = None
    record: EndRecord | None = None


class AppliedNetwork:
    """Network conditions in force on a link; call :meth:`teardown` (idempotent)."""

    def __init__(self, spec: NetworkSpec, states: list[_EndState], apply_s: float) -> None:
        self.record = NetworkRecord(spec, tuple(s.record for s in states if s.record), apply_s)
        self._states = states
        self._done = False

    def teardown(self) -> NetworkRecord:
        """Remove everything this emulation installed, verify, and return the record."""
        if self._done:
            return self.record
        t0 = time.monotonic()
        errors = _teardown_ends(self._states)
        self._done = True
        self.record.teardown_s = time.monotonic() - t0
        if errors:
            raise EmulationError("network teardown incomplete: " + "; ".join(errors))
        return self.record


def apply_network(
    ends: Sequence[LinkEnd], spec: NetworkSpec, *, run_id: str, python: str = "python3"
) -> AppliedNetwork:
    """Apply ``spec`` on the given ends (usually compute and storage) and verify it.

    On any failure everything already applied is torn down before the error propagates.
    ``python`` is the interpreter used on a host for the NFQUEUE delayer (needs
    NetfilterQueue).
    """
    t0 = time.monotonic()
    share = spec.delay_ms / len(ends) if ends else 0.0
    states = [_EndState(end, scope_name(end.conn, run_id), run_id) for end in ends]
    got = run_parallel({str(i): partial(_apply_end, st, spec, share, python)
                        for i, st in enumerate(states)})
    failed = [v for v in got.values() if isinstance(v, BaseException)]
    if failed:
        _teardown_ends(states)
        raise failed[0]
    return AppliedNetwork(spec, states, time.monotonic() - t0)


def _teardown_ends(states: list[_EndState]) -> list[str]:
    """Undo every end concurrently (each end is a different host); the errors."""
    errors: list[str] = []
    for value in run_parallel({str(i): partial(_teardown_end, st)
                               for i, st in enumerate(states)}).values():
        errors += [str(value)] if isinstance(value, BaseException) else value
    return errors


@contextlib.contextmanager
def network_applied(
    ends: Sequence[LinkEnd], spec: NetworkSpec, *, run_id: str, python: str = "python3"
) -> Iterator[NetworkRecord]:
    """Context manager around :func:`apply_network`; always tears down."""
    applied = apply_network(ends, spec, run_id=run_id, python=python)
    try:
        yield applied.record
    finally:
        applied.teardown()


# -- one end --------------------------------------------------------------------------------
def route_iface(conn: Connection, peer: str) -> str | None:
    """The interface the host's kernel uses to reach ``peer`` (``ip route get``)."""
    out = conn.run(["ip", "-o", "route", "get", peer], check=False, timeout=10).stdout.split()
    return out[out.index("dev") + 1] if "dev" in out else None


def _apply_end(st: _EndState, spec: NetworkSpec, delay_ms: float, python: str) -> None:
    conn = st.end.conn
    # the inventory names one data interface per host; a storage host wired to several
    # compute hosts reaches each through its own link, so follow the route to the peer
    routed = route_iface(conn, st.end.peer_address)
    if routed and routed != st.end.iface and routed != "lo":
        st.end = LinkEnd(conn, routed, st.end.peer_address)
    iface = st.end.iface
    check_shapeable(conn, iface)
    method = "none"
    queue = None
    record(conn, st.run_id, [("qdisc", iface)])
    for argv in spec.rate_cmds(iface):
        st.qdisc = True
        run_checked(conn, argv, f"tc tbf on {iface}")
    if delay_ms > 0:
        if _netem_ok.get(conn, True) and _try_netem(st, spec, delay_ms):
            method = "netem"
        else:
            queue = _apply_nfqueue(st, delay_ms, python)
            method = "nfqueue"
    _verify_qdisc(conn, iface, spec, method == "netem")
    st.record = EndRecord(conn.name, iface, method, delay_ms, spec.rate_mbit, queue)


def _try_netem(st: _EndState, spec: NetworkSpec, delay_ms: float) -> bool:
    conn = st.end.conn
    for argv in spec.netem_cmds(st.end.iface, delay_ms):
        try:
            conn.run(argv, timeout=30)
            st.qdisc = True
        except RemoteCommandFailed as e:
            if any(s in e.result.stderr.lower() for s in _NO_NETEM):
                _netem_ok[conn] = False
                return False
            raise EmulationError(f"{conn.name}: netem on {st.end.iface} failed: {e}") from None
    _netem_ok[conn] = True
    return True


def _apply_nfqueue(st: _EndState, delay_ms: float, python: str) -> int:
    conn, iface = st.end.conn, st.end.iface
    queue = queue_number(st.name, iface)
    workdir = st.workdir = private_dir(conn, st.run_id, "delay")
    script = f"{workdir}/nimo-delayer.py"
    put_atomic(conn, DELAYER_SOURCE, script, mode=0o755)
    st.delayer = conn.start([
        python, script, "--queue", str(queue), "--delay-ms", f"{delay_ms:.3f}",
        "--pidfile", f"{workdir}/delayer.pid",
    ])
    _wait_queue_bound(st, queue)
    rule = nfqueue_rule(iface, st.end.peer_address, queue, st.name)
    record(conn, st.run_id, [("rule", st.name)])
    st.rule = rule
    run_checked(conn, iptables_cmd("-A", rule), f"iptables NFQUEUE rule on {iface}")
    run_checked(conn, iptables_cmd("-C", rule), f"verifying NFQUEUE rule on {iface}")
    return queue


def _wait_queue_bound(st: _EndState, queue: int, timeout: float = 5.0) -> None:
    conn = st.end.conn
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = conn.run(
            ["cat", "/proc/net/netfilter/nfnetlink_queue"], check=False, timeout=10
        ).stdout
        if any(line.split()[:1] == [str(queue)] for line in text.splitlines()):
            return
        if st.delayer is not None and not st.delayer.running():
            res = st.delayer.wait(1)
            raise EmulationError(
                f"{conn.name}: delayer exited {res.exit_code}: {res.stderr.strip()[-300:]}",
                hint="the host needs python3 with NetfilterQueue (pip install NetfilterQueue)",
            )
        time.sleep(0.02)
    raise EmulationError(f"{conn.name}: delayer did not bind NFQUEUE {queue} in {timeout} s")


def list_qdiscs(conn: Connection, iface: str) -> list[dict]:
    """The qdiscs on ``iface`` as ``tc -j`` reports them."""
    out = run_checked(conn, ["tc", "-j", "qdisc", "show", "dev", iface], f"tc show {iface}")
    return json.loads(out or "[]")


def _verify_qdisc(conn: Connection, iface: str, spec: NetworkSpec, netem: bool) -> None:
    kinds = {q.get("kind"): q for q in list_qdiscs(conn, iface)}
    if spec.rate_mbit is not None:
        tbf = kinds.get("tbf")
        if tbf is None:
            raise EmulationError(f"{conn.name}: no tbf on {iface} after setting it")
        rate = tbf.get("options", {}).get("rate", 0) * 8 / 1e6  # bytes/s -> Mbit/s
        if abs(rate - spec.rate_mbit) > 0.02 * spec.rate_mbit + 0.01:
            raise EmulationError(f"{conn.name}: tbf on {iface} reads {rate} Mbit/s")
    if netem and "netem" not in kinds:
        raise EmulationError(f"{conn.name}: no netem on {iface} after setting it")


def _teardown_end(st: _EndState) -> list[str]:
    """Undo one end; returns error strings (never raises)."""
    conn, iface = st.end.conn, st.end.iface
    errors: list[str] = []

    def attempt(what: str, fn) -> None:
        try:
            fn()
        except Exception as e:  # keep tearing down the rest
            errors.append(f"{conn.name}: {what}: {e}")

    if st.rule is not None:
        rule = st.rule
        attempt("deleting NFQUEUE rule", lambda: _delete_rule(conn, rule))
    if st.delayer is not None:
        delayer = st.delayer
        attempt("stopping delayer", lambda: delayer.stop(2.0))
    if st.workdir is not None:
        workdir = st.workdir
        attempt("removing work dir", lambda: _remove_workdir(conn, workdir))
    if st.qdisc:
        attempt("deleting qdisc", lambda: _delete_qdisc(conn, iface))
    return errors


def _delete_rule(conn: Connection, rule: list[str]) -> None:
    while conn.run(iptables_cmd("-C", rule), check=False, timeout=30).exit_code == 0:
        run_checked(conn, iptables_cmd("-D", rule), "iptables -D")


def _remove_workdir(conn: Connection, workdir: str) -> None:
    # a delayer that outlived its channel is killed by its pidfile
    conn.run(
        ["sh", "-c", 'p=$(cat "$1" 2>/dev/null) && kill -KILL "$p" 2>/dev/null; rm -rf "$2"',
         "nimo-rm", f"{workdir}/delayer.pid", workdir],
        check=False, timeout=30,
    )


def _delete_qdisc(conn: Connection, iface: str) -> None:
    if is_ours(root_qdisc(conn, iface)):  # never another's (set up was refused over one)
        for argv in NetworkSpec.teardown_cmds(iface):
            run_checked(conn, argv, f"tc del on {iface}")
    left = [q.get("kind") for q in list_qdiscs(conn, iface) if q.get("kind") in ("tbf", "netem")]
    if left:
        raise EmulationError(f"{conn.name}: {left} still on {iface}")
