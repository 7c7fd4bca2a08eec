"""What a run creates on a host: private directories, and a marker listing every object.

No predictable path is ever used by root: a run's directories are made with ``mktemp -d``
(mode 0700, unique name), a user-given parent directory is checked for owner and mode
without following symlinks, and uploads are written to a temporary name in the private
directory, then renamed.

Every object carries its run id, ``<campaign token>-r<run>-<attempt>-<hex>``, in its name and
is recorded in a marker file on the host before it is made (a directory: as it is made):
``$HOME/.nimo-objects/<run id>.<host token>``, one ``kind<TAB>ident`` line per object, in a
directory that must be the SSH user's own with mode 0700. ``workbench.clean`` removes exactly
what the markers list. Kinds:

* ``dir``: a private directory; removed with its content. A process whose command line names
  a path inside it (delayer, nfs-ganesha, sadc, dumpcap) is killed; a mount inside is removed.
* ``mount``: a user-given mount point (``storage.mountpoint``);
* ``qdisc``: an interface whose root qdisc has nimo's handle (``QDISC_HANDLE``);
* ``rule``: the comment of an iptables NFQUEUE rule;
* ``cgroup``: a cgroup directory.

A process may register an :class:`ObjectLog` per campaign (:func:`register_hook`, the
campaign's store) that records every object as the host's marker does and forgets a run's
objects when its marker is dropped.
"""

from __future__ import annotations

import hashlib
import shlex
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from nimo.store.objects import HostObject
from workbench.emulation.common import PREFIX, check_run_id, host_token, run_checked
from workbench.errors import EmulationError
from workbench.remote.connection import Connection

MARK_DIR = ".nimo-objects"
KINDS = ("dir", "mount", "qdisc", "rule", "cgroup", "parent")
BAD_PATH_CHARS = ("\\", "\t", "\n")  # /proc/mounts escapes them; refused in given paths


class ObjectLog(Protocol):
    """Where objects are recorded besides the host (``nimo.store.Store`` is one)."""

    def record_host_object(self, obj: HostObject) -> None: ...

    def forget_host_objects(self, campaign: str, host: str | None = None,
                            run_id: str | None = None) -> int: ...


# the marker dir: created 0700 if missing, then it must be ours, 0700, a real directory
_MARKDIR = (  # $2 "find": exit 4 when the directory does not exist (nothing is made)
    'd="${HOME:-/root}/$1"; if [ "$2" = find ] && [ ! -e "$d" ] && [ ! -L "$d" ]; then exit 4; fi; '
    'mkdir -m 700 -- "$d" 2>/dev/null; '
    's=$(stat -c "%u %a %F" -- "$d") || exit 3; '
    '[ "$s" = "$(id -u) 700 directory" ] || { echo "$d: owner, mode, type: $s" >&2; exit 3; }; '
    'echo "$d"'
)
_MKTEMP = (
    'set -e; d=$(mktemp -d --suffix="$4" -p "$3" "$2"); '
    'if ! printf "dir\\t%s\\n" "$d" >> "$1"; then rmdir -- "$d"; exit 1; fi; echo "$d"'
)
# $1: the marker ("" = none), $2: "1" to adopt, then the chain / .. path: each missing
# component made (0700) and, once made, recorded ("+path" printed); with $2, an existing one
# that another marker in the marker dir records as a parent is recorded too ("=path");
# then the uid and every component's stat. mkdir comes first: one that fails because the
# directory exists (already, or made a moment ago by a run preparing another host on the same
# filesystem, as the lab's namespaces are) is an existing one, not the end of the chain
_MAKE_PARENTS = (
    'm=$1; a=$2; shift 2; id -u; for d; do if mkdir -m 700 -- "$d" 2>/dev/null; then '
    'echo "+$d"; [ -z "$m" ] || printf "parent\\t%s\\n" "$d" >> "$m"; continue; fi; '
    '[ -e "$d" ] || [ -L "$d" ] || break; '
    '[ "$a" = 1 ] && [ -n "$m" ] || continue; l=$(printf "parent\\t%s" "$d"); '
    'for f in "${m%/*}"/*; do [ "$f" = "$m" ] && continue; '
    'grep -qxF -- "$l" "$f" 2>/dev/null || continue; echo "=$d"; printf "%s\\n" "$l" >> "$m"; '
    'break; done; done; stat -c "%n|%u|%a|%F" -- "$@"'
)
_markdirs: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()
_hooks: dict[str, tuple[str, ObjectLog]] = {}
_lock = threading.Lock()


def campaign_token(campaign: str) -> str:
    """``c`` + 8 hex digits of the campaign name's hash (``c0`` for runs of no campaign)."""
    if not campaign:
        return "c0"
    return "c" + hashlib.sha256(campaign.encode()).hexdigest()[:8]


def register_hook(campaign: str, hook: ObjectLog | None) -> None:
    """Record ``campaign``'s objects in ``hook`` too (None: stop)."""
    with _lock:
        if hook is None:
            _hooks.pop(campaign_token(campaign), None)
        else:
            _hooks[campaign_token(campaign)] = (campaign, hook)


def marker_dir(conn: Connection) -> str:
    """The host's marker directory (made if missing; refused unless private)."""
    found = _markdirs.get(conn)
    if found is None:
        found = _markdir(conn, "make")
        assert found is not None
    return found


def existing_marker_dir(conn: Connection) -> str | None:
    """The host's marker directory if it exists (refused unless private), else None: a
    host we never ran on keeps nothing of ours, not even an empty directory."""
    return _markdirs.get(conn) or _markdir(conn, "find")


def _markdir(conn: Connection, mode: str) -> str | None:
    res = conn.run(["sh", "-c", _MARKDIR, "nimo-markdir", MARK_DIR, mode], check=False,
                   timeout=30)
    if mode == "find" and res.exit_code == 4:
        return None
    if not res.ok:
        raise EmulationError(f"{conn.name}: marker directory is not private: "
                             f"{res.stderr.strip()[-200:] or res.exit_code}",
                             hint="it must be a directory of the SSH user with mode 0700")
    found = _markdirs[conn] = res.stdout.strip()
    return found


def marker_file(conn: Connection, run_id: str) -> str:
    """The marker file of ``run_id``'s objects on this host."""
    return f"{marker_dir(conn)}/{check_run_id(run_id)}.{host_token(conn)}"


def forget_campaign_on(host: str, campaign: str) -> None:
    """Drop the store's record of ``campaign``'s objects on ``host`` (all removed)."""
    hook = _hook(campaign_token(campaign))  # a run id starts with its campaign's token
    if hook is not None:
        hook[1].forget_host_objects(hook[0], host=host)


def _hook(run_id: str) -> tuple[str, ObjectLog] | None:
    with _lock:
        return _hooks.get(run_id.split("-", 1)[0])


def _notify(conn: Connection, run_id: str, items: Iterable[tuple[str, str]]) -> None:
    hook = _hook(run_id)
    if hook is not None:
        for kind, ident in items:
            hook[1].record_host_object(HostObject(hook[0], run_id, conn.name, kind, ident))


def record(conn: Connection, run_id: str, items: Sequence[tuple[str, str]]) -> None:
    """Record objects (``(kind, ident)``) before making them; idents are single-line."""
    for kind, ident in items:
        if kind not in KINDS or any(c in ident for c in BAD_PATH_CHARS):
            raise EmulationError(f"{conn.name}: cannot record {kind} {ident!r}")
    lines = "".join(f"{kind}\t{ident}\n" for kind, ident in items)
    run_checked(conn, ["sh", "-c", 'printf "%s" "$2" >> "$1"', "nimo-mark",
                       marker_file(conn, run_id), lines], "recording objects")
    _notify(conn, run_id, items)


def forget(conn: Connection, run_id: str) -> None:
    """Drop ``run_id``'s marker on this host (after its objects were all removed)."""
    conn.run(["rm", "-f", "--", marker_file(conn, run_id)], check=False, timeout=30)
    hook = _hook(run_id)
    if hook is not None:
        hook[1].forget_host_objects(hook[0], host=conn.name, run_id=run_id)


def private_dir(conn: Connection, run_id: str, role: str, parent: str = "/tmp",
                checked: bool = False) -> str:
    """A new directory ``<parent>/nimo-<run_id>-<role>-XXXXXX.<host token>`` (mktemp -d,
    mode 0700), recorded as it is made. A ``parent`` other than /tmp is checked first
    (:func:`check_parent`) unless the caller just did (``checked``)."""
    if parent != "/tmp" and not checked:
        check_parent(conn, parent)
    template = f"{PREFIX}{check_run_id(run_id)}-{role}-XXXXXX"
    res = conn.run(["sh", "-c", _MKTEMP, "nimo-mktemp", marker_file(conn, run_id), template,
                    parent, f".{host_token(conn)}"], check=False, timeout=30)
    if not res.ok:
        raise EmulationError(f"{conn.name}: cannot make a private directory in {parent}: "
                             f"{res.stderr.strip()[-200:] or res.exit_code}")
    path = res.stdout.strip()
    _notify(conn, run_id, [("dir", path)])
    return path


def put_atomic(conn: Connection, local: str | Path, remote: str, mode: int = 0o644) -> None:
    """Upload to a temporary name beside ``remote``, then rename it over ``remote``."""
    parent, _, name = remote.rpartition("/")
    tmp = f"{parent}/.{name}.part"
    conn.put(local, tmp, mode=mode)
    run_checked(conn, ["mv", "-f", "--", tmp, remote], f"renaming {tmp}")


def check_path_chars(conn: Connection, path: str, what: str) -> str:
    """Refuse a path /proc/mounts and the markers cannot carry (``\\``, tab, newline)."""
    if any(c in path for c in BAD_PATH_CHARS):
        raise EmulationError(f"{conn.name}: {what} {path!r} contains a backslash, tab or "
                             "newline", hint="choose a path without them")
    return path


def parent_problems(uid: int, stats: Sequence[str]) -> str | None:
    """Pure: why a directory chain (``stat -c '%n|%u|%a|%F'`` lines, / first) is unsafe."""
    for line in stats:
        name, owner, mode, kind = line.rsplit("|", 3)
        bits = int(mode, 8)
        if kind != "directory":
            return f"{name} is a {kind}, not a directory"
        if int(owner) not in (0, uid):
            return f"{name} is owned by uid {owner}"
        if bits & 0o022 and not bits & 0o1000:
            return f"{name} is writable by others (mode {mode})"
    return None


def check_parent(conn: Connection, path: str, run_id: str | None = None,
                 adopt: bool = False) -> list[str]:
    """Refuse (one line naming host and path) a parent directory someone else could change:
    every component must be a real directory (symlinks are not followed) owned by root or
    the SSH user and not writable by others unless sticky. Missing components are made (0700,
    one at a time) and, with ``run_id``, recorded in its marker as ``parent`` objects (removed
    only while empty); returns the ones made, outermost first. ``adopt``: an existing
    component that another run's marker on this host records as a parent it made is
    recorded (and returned) as ours too, so whichever campaign ends last removes it."""
    check_path_chars(conn, path, "directory")
    parts = [p for p in path.split("/") if p]
    chain = ["/"] + ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    marker = marker_file(conn, run_id) if run_id else ""
    res = conn.run(["sh", "-c", _MAKE_PARENTS, "nimo-check", marker, "1" if adopt else "0",
                    *chain], check=False, timeout=30)
    lines = res.stdout.splitlines()
    made = [line[1:] for line in lines if line[:1] in ("+", "=")]
    stats = [line for line in lines[1:] if line[:1] not in ("+", "=")]
    problem = (f"cannot read it: {res.stderr.strip()[-200:]}" if not res.ok or not stats
               else parent_problems(int(lines[0]), stats))
    if made and run_id:
        _notify(conn, run_id, [("parent", d) for d in made])
    if problem:
        raise EmulationError(f"{conn.name}: directory {shlex.quote(path)} is not safe: "
                             f"{problem}", hint="use a directory only root (or the SSH user) "
                             "can change, e.g. /tmp")
    return made
