"""The one-line reason of a failed run, its cause first.

A remote command's error names the host, the whole command line and its exit code before the
stderr that says why; cut to a length, the why was lost ("Host key verification failed",
"No space left on device"). :func:`failure_reason` puts the last line of the failing
command's stderr first and cuts only what follows it.
"""

from __future__ import annotations

from nimo.errors import one_line
from workbench.errors import AppFailed, HostError, ParseError, RemoteCommandFailed, WorkbenchError

REASON_CHARS = 300
_TIMER_PREFIX = "nimo-T "  # G's time stamp (executor.sample.TIMER), never a cause


def stderr_cause(error: BaseException) -> str | None:
    """The last non-empty stderr line of the remote command that failed in ``error`` (or an
    error it was raised from), white space folded; None when there is none."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, RemoteCommandFailed):
            lines = [" ".join(ln.split()) for ln in e.result.stderr.splitlines()]
            lines = [ln for ln in lines if ln and not ln.startswith(_TIMER_PREFIX)]
            if lines:
                return lines[-1]
        e = raised_from(e)
    return None


def raised_from(e: BaseException) -> BaseException | None:
    """The error ``e`` was raised from, or while handling (also when hidden by ``from
    None``: ``run_checked`` wraps a failed command so)."""
    return e.__cause__ or e.__context__


def cause_first(error: BaseException, prefix: str = "", limit: int = REASON_CHARS) -> str:
    """``error`` as one line starting with its stderr cause (if any), then ``prefix`` and the
    error's text; only the part after the cause is cut to ``limit``."""
    text = f"{prefix}{one_line(error)}"
    cause = stderr_cause(error)
    if cause is None:
        return _cut(text, limit)
    return cause + _cut(f" ({text})", max(limit - len(cause), 0))


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if text.startswith(" ("):
        return text[: max(limit - 4, 0)] + "...)"
    return text[: limit - 3] + "..."


def failure_reason(phase: str, e: Exception) -> tuple[str, bool]:
    """The one-line reason of a failed attempt, and whether it is transient."""
    if isinstance(e, AppFailed):  # its text is G's own: exit code (or timeout), stderr tail
        return _cut(one_line(e), limit=REASON_CHARS), False
    if isinstance(e, HostError):
        return cause_first(e, f"{phase}: "), True
    if isinstance(e, WorkbenchError | ParseError | OSError | ValueError):
        return cause_first(e, f"{phase}: "), False
    return cause_first(e, f"{phase}: internal error {type(e).__name__}: "), False
