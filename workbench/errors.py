"""Every error the side-effect layer raises; ``WorkbenchError`` is their root.

``WorkbenchError`` derives from ``nimo.errors.NimoError``: the same ``message`` and ``hint``,
and the CLI's one-line, exit-2 handling. Each class says when it is raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from nimo.errors import NimoError

if TYPE_CHECKING:
    from workbench.remote.result import CommandResult

STDERR_TAIL_CHARS = 400


class WorkbenchError(NimoError):
    """Root of errors raised by ``workbench``; carries ``message`` and optional ``hint``."""


class InventoryError(WorkbenchError):
    """Raised when an inventory YAML file is malformed or names something unknown; the
    message names the file and the key path."""


class HostError(WorkbenchError):
    """Raised when a host cannot be reached, refuses our key, presents an unknown or changed
    host key, or drops the connection."""


class HostRefused(HostError):
    """Raised when a host refuses us for good: our key is rejected or missing, its host key
    is unknown or changed, or the known_hosts file is missing. Never transient: retrying
    cannot help, so a campaign stops at once."""


class RemoteCommandFailed(WorkbenchError):
    """Raised when a remote command exits non-zero; ``.result`` holds its ``CommandResult``
    and ``str()`` shows host, command, exit code and the tail of stderr."""

    def __init__(self, result: CommandResult, hint: str | None = None) -> None:
        self.result = result
        tail = _tail(result.stderr) or "(no stderr)"
        super().__init__(
            f"{result.host}: `{result.command}` exited {result.exit_code}: {tail}", hint
        )


class CommandTimeout(RemoteCommandFailed):
    """Raised when a remote command ran longer than its timeout and was killed (SIGKILL) on
    the host."""

    def __init__(self, result: CommandResult, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.result = result
        WorkbenchError.__init__(
            self,
            f"{result.host}: `{result.command}` exceeded its {timeout_s:g} s timeout "
            f"and was killed",
        )


class HostGroupError(WorkbenchError):
    """Raised when at least one host failed a step run on many hosts; ``.results`` maps
    host -> value or exception, ``.failures`` the failed ones."""

    def __init__(self, results: Mapping[str, object]) -> None:
        self.results = dict(results)
        self.failures = {h: r for h, r in self.results.items() if isinstance(r, BaseException)}
        detail = "; ".join(f"{h}: {e}" for h, e in sorted(self.failures.items()))
        super().__init__(f"{len(self.failures)} of {len(self.results)} hosts failed: {detail}")


class EmulationError(WorkbenchError):
    """Raised when setting up or verifying tc, cgroups or mounts failed, or a read-back
    shows a value other than the one set."""


class AppFailed(WorkbenchError):
    """Raised when the application G itself failed: a non-zero exit, killed by its timeout
    or by the OOM killer."""


class ProfileError(WorkbenchError):
    """Raised when a calibration benchmark (resource profile) failed or printed something
    unexpected."""


class ParseError(WorkbenchError):
    """Raised when monitor output cannot be parsed; the message names ``source:line``."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


class LabError(WorkbenchError):
    """Raised when building or removing the namespace lab failed (a local command exited
    non-zero, a namespace or sshd did not come up)."""


def _tail(text: str, limit: int = STDERR_TAIL_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
