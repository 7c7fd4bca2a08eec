"""Shaping only on the data path: never on the interface carrying the SSH (management)
connection, never over a root qdisc someone else installed."""

from __future__ import annotations

import json
import weakref

from workbench.emulation.common import run_checked
from workbench.errors import EmulationError
from workbench.remote.connection import Connection

QDISC_HANDLE = "4e49:"  # the root handle of every qdisc nimo installs ("NI")
# root qdiscs a kernel installs by itself: replacing them takes nothing from anyone
DEFAULT_QDISCS = ("noqueue", "pfifo_fast", "mq", "fq_codel", "pfifo", "noop", "fq")
# the interfaces of the SSH peer's route and of the SSH server's own address
_MGMT = (
    'set -- $SSH_CONNECTION; [ -n "$1" ] || exit 3; ip -o route get "$1"; '
    'echo "#"; ip -o addr show to "$3"'
)
_mgmt: weakref.WeakKeyDictionary[Connection, frozenset[str]] = weakref.WeakKeyDictionary()


def parse_management(text: str) -> frozenset[str]:
    """Pure: interface names in ``ip -o route get`` (after ``dev``) and ``ip -o addr``
    (second field, without ``@peer``) output, separated by a ``#`` line."""
    route, _, addrs = text.partition("\n#\n")
    found = set()
    words = route.split()
    if "dev" in words and words.index("dev") + 1 < len(words):
        found.add(words[words.index("dev") + 1])
    for line in addrs.splitlines():
        parts = line.split()
        if len(parts) > 1:
            found.add(parts[1].split("@", 1)[0])
    return frozenset(found - {"lo"})


def management_ifaces(conn: Connection) -> frozenset[str]:
    """The host's interfaces that carry this SSH connection (cached per connection)."""
    found = _mgmt.get(conn)
    if found is None:
        res = conn.run(["sh", "-c", _MGMT], check=False, timeout=10)
        if not res.ok:
            raise EmulationError(f"{conn.name}: cannot tell which interface carries the SSH "
                                 "connection ($SSH_CONNECTION unset)")
        found = _mgmt[conn] = parse_management(res.stdout)
    return found


def root_qdisc(conn: Connection, iface: str) -> dict:
    """The root qdisc of ``iface`` as ``tc -j`` reports it ({} when none is listed)."""
    out = run_checked(conn, ["tc", "-j", "qdisc", "show", "dev", iface, "root"],
                      f"tc show {iface}")
    roots = [q for q in json.loads(out or "[]") if q.get("root")]
    return roots[0] if roots else {}


def is_ours(qdisc: dict) -> bool:
    """True for a root qdisc nimo installed (its handle)."""
    return qdisc.get("handle") == QDISC_HANDLE


def check_shapeable(conn: Connection, iface: str) -> None:
    """Refuse, with one line naming host and interface, to shape the management interface
    or to replace a root qdisc nimo did not install."""
    if iface in management_ifaces(conn):
        raise EmulationError(
            f"{conn.name}: refusing to shape {iface}: it carries the SSH (management) "
            "connection", hint="give every compute host a data_address reached over a "
            "separate data link (not the management network)")
    root = root_qdisc(conn, iface)
    if root and not is_ours(root) and root.get("kind") not in DEFAULT_QDISCS:
        raise EmulationError(
            f"{conn.name}: refusing to shape {iface}: it has a root {root.get('kind')} qdisc "
            f"(handle {root.get('handle')}) nimo did not install",
            hint="remove it, or use another data interface")
