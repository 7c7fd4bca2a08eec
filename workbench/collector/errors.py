"""The collector's error type: every parse error names the source file and line."""

from __future__ import annotations

from workbench.exceptions import WorkbenchError


class ParseError(WorkbenchError):
    """Monitor output could not be parsed; the message names ``source:line``."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")
