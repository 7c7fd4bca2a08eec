"""Result of one remote command and the errors that carry it."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
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
    is built by :func:`workbench.remote.connection.command_line`, which calls this."""
    return shlex.join(argv)





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
