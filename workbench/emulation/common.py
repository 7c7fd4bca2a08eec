"""Helpers shared by the emulation steps: per-host resource names and batched file I/O."""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence

from workbench.errors import EmulationError, RemoteCommandFailed
from workbench.remote.connection import Connection

PREFIX = "nimo-"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_TOKEN_BAD = re.compile(r"[^A-Za-z0-9_-]")
_tokens: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()



def check_run_id(run_id: str) -> str:
    """Validate a run id (letters, digits, ``_`` and ``-``; at most 64 characters)."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise EmulationError(
            f"invalid run id {run_id!r}", hint="use letters, digits, '_' and '-' (max 64)"
        )
    return run_id


def host_token(conn: Connection) -> str:
    """The host's own name (``hostname``), sanitised; cached per connection.

    Hosts of a lab share one filesystem and one cgroup tree, so names are scoped by it.
    """
    token = _tokens.get(conn)
    if token is None:
        name = conn.run(["hostname"], timeout=10).stdout.strip() or conn.name
        token = _TOKEN_BAD.sub("_", name)[:48]
        _tokens[conn] = token
    return token


def scope_name(conn: Connection, run_id: str) -> str:
    """``nimo-<run_id>.<hosttoken>``: the name of every resource a run creates on a host."""
    return f"{PREFIX}{check_run_id(run_id)}.{host_token(conn)}"


def read_files(conn: Connection, paths: Sequence[str]) -> dict[str, list[str]]:
    """Read several small files in one command -> {path: lines} (missing files are absent)."""
    if not paths:
        return {}
    res = conn.run(["grep", "-H", "", *paths], check=False, timeout=30)
    out: dict[str, list[str]] = {}
    for line in res.stdout.splitlines():
        for p in paths:  # paths may contain ':'; match the known prefix
            if line.startswith(p + ":"):
                out.setdefault(p, []).append(line[len(p) + 1 :])
                break
    return out


def run_checked(conn: Connection, argv: Sequence[str], what: str, timeout: float = 30) -> str:
    """Run a setup command; turn a failure into an :class:`EmulationError` naming ``what``."""
    try:
        return conn.run(argv, timeout=timeout).stdout
    except RemoteCommandFailed as e:
        raise EmulationError(
            f"{conn.name}: {what} failed: `{e.result.command}`: "
            f"{e.result.stderr.strip()[-300:] or e.result.exit_code}"
        ) from None
