"""Every error the learning core raises; ``NimoError`` is their root.

Each carries a one-line ``message`` and an optional ``hint`` naming what would be valid. The
CLI prints ``str(error)`` and exits 2, never a traceback; ``workbench.errors.WorkbenchError``
(side effects) derives from ``NimoError`` so that one handler serves both packages.
"""

from __future__ import annotations


class NimoError(Exception):
    """Root of every error raised by ``nimo`` and ``workbench`` for a user to read."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(NimoError):
    """Raised when a design, an option or a command-line value is malformed or names
    something unknown; the message names the key and the hint the valid values."""


class FileAccessError(NimoError):
    """Raised when a file the user named cannot be read or written (the OS reason given)."""


class DataError(NimoError):
    """Raised when a dataset (CSV of measurements) or a sample is malformed, or cannot
    answer what was asked of it (an unknown column, an assignment it never measured)."""


class ModelError(NimoError):
    """Raised when a cost-model file is corrupt, of a newer format version, not a NIMO
    model, or asked to predict from inputs it cannot use."""


class StoreError(NimoError):
    """Raised when the campaign store cannot be reached, refuses a write (a name taken, a
    run stored twice) or does not hold what was asked for."""


class PlanExhausted(NimoError):
    """Raised by a planner asked for a run when no candidate assignment is left to run."""


def interrupt_reason(error: KeyboardInterrupt) -> str:
    """What interrupted: ``signal N`` for SIGTERM/SIGHUP (``workbench.exitstatus``),
    ``Ctrl-C`` for a bare Ctrl-C (a KeyboardInterrupt is truthy even when its text is
    empty)."""
    return str(error) or "Ctrl-C"


def one_line(error: BaseException, *, with_type: bool = False, limit: int | None = None) -> str:
    """``error`` as one line for a log or a stored reason: white space folded, a database
    driver's own error (``.orig``) preferred, optionally prefixed by the class name and cut
    to ``limit`` characters."""
    text = " ".join(str(getattr(error, "orig", None) or error).split())
    name = type(error).__name__
    text = (f"{name}: {text}" if with_type else text) if text else name
    if limit is not None and len(text) > limit:
        return text[: limit - 3] + "..."
    return text
