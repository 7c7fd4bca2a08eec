"""Result of one remote command and the errors that carry it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    """What one remote command did: ``exit_code`` 0 means success."""

    host: str
    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        """True when the command exited 0."""
        return self.exit_code == 0

    @property
    def command(self) -> str:
        """The command line as the remote shell received it (without wrappers)."""
        return quote_argv(self.argv)


def quote_argv(argv: Sequence[str]) -> str:
    """The ONE place an argv becomes shell text (``shlex.join``): every remote command line
    is built by :func:`command_line`, which calls this."""
    return shlex.join(argv)


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def command_line(
    argv: Sequence[str],
    *,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    announce_pid: bool = False,
    stdin_null: bool = False,
) -> str:
    """Build the remote command line: the only ``shlex.join`` in the workbench.

    Wrappers are themselves argv: ``env K=V`` for ``env``, ``timeout --signal=KILL`` for a
    timeout (so the host kills the command even if we vanish), and a ``sh -c 'echo $$; exec'``
    shim that prints the PID first for background processes. ``stdin_null`` appends a
    ``</dev/null`` redirect, so the client never has to send an EOF: paramiko can send that
    EOF after the server has closed the channel, and OpenSSH then drops the whole connection
    ("ieof packet referred to nonexistent channel", paramiko issues 1115 and 1705).
    """
    full = list(as_argv(argv))
    if timeout is not None:
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        full = ["timeout", "--signal=KILL", f"{timeout:.3f}s", *full]
    if env:
        for key in env:
            if not _ENV_NAME.fullmatch(key):
                raise ValueError(f"invalid environment variable name {key!r}")
        full = ["env", *(f"{k}={v}" for k, v in env.items()), *full]
    if announce_pid:
        full = ["sh", "-c", 'echo "$$"; exec "$@"', "nimo-start", *full]
    return quote_argv(full) + (" </dev/null" if stdin_null else "")


def as_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Validate and freeze an argv: a non-empty sequence of str (a bare str is refused)."""
    if isinstance(argv, str | bytes):
        raise TypeError("argv must be a sequence of strings, not a single string")
    out = tuple(argv)
    if not out:
        raise ValueError("argv must not be empty")
    for a in out:
        if not isinstance(a, str):
            raise TypeError(f"argv items must be str, got {type(a).__name__}: {a!r}")
        if "\x00" in a:
            raise ValueError("argv items must not contain NUL bytes")
    return out
