"""``FakeConnection``: a ``Connection`` that answers commands from rules, with no host.

Rules map a command to an answer: an argv list matches exactly, a string is a regular
expression searched in the command line (``shlex.join`` of the argv), a callable is a
predicate on the argv tuple. The latest matching rule wins; an unmatched command exits 0
with no output. Every command is recorded in ``commands`` (``start`` ones too), and files
written by ``put``/``write_text`` are kept in ``files``::

    conn = FakeConnection("c1").on(["hostname"], "c1\\n").on(r"^tc ", exit_code=2, stderr="no")
    conn.run(["hostname"]).stdout == "c1\\n"
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import HostError, RemoteCommandFailed
from workbench.remote.connection import Connection, RemoteProcess
from workbench.remote.result import CommandResult, as_argv, quote_argv

Argv = tuple[str, ...]
Pattern = Sequence[str] | str | Callable[[Argv], bool]


@dataclass(frozen=True)
class Answer:
    """What a command prints and how it exits."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    duration_s: float = 0.0


Respond = Callable[[Argv], Answer | str]


@dataclass(frozen=True)
class _Rule:
    matches: Callable[[Argv], bool]
    respond: Respond
    raises: BaseException | None = None


def _matcher(pattern: Pattern) -> Callable[[Argv], bool]:
    if isinstance(pattern, str):
        regex = re.compile(pattern)
        return lambda argv: regex.search(quote_argv(argv)) is not None
    if callable(pattern):
        return pattern
    exact = tuple(pattern)
    return lambda argv: argv == exact


class FakeConnection(Connection):
    """A connection to a pretend host: commands are answered by rules (see the module)."""

    def __init__(self, name: str = "fake", *, address: str = "192.0.2.1") -> None:
        super().__init__(address, name=name, retries=0)
        self.rules: list[_Rule] = []
        self.commands: list[Argv] = []
        self.files: dict[str, str] = {}
        self.closes = 0

    def on(self, pattern: Pattern, stdout: str = "", *, stderr: str = "", exit_code: int = 0,
           call: Respond | None = None, raises: BaseException | None = None) -> FakeConnection:
        """Answer commands matching ``pattern`` (later rules win); ``call(argv)`` computes
        the answer (or stdout) instead; ``raises`` is raised instead of answering."""
        fixed = Answer(stdout, stderr, exit_code)
        self.rules.append(_Rule(_matcher(pattern), call or (lambda argv: fixed), raises))
        return self

    def ran(self, pattern: Pattern) -> list[Argv]:
        """The recorded commands matching ``pattern``, in order."""
        matches = _matcher(pattern)
        return [argv for argv in self.commands if matches(argv)]

    def answer(self, argv: Sequence[str]) -> CommandResult:
        """Record ``argv`` and answer it by the rules (raising a rule's ``raises``)."""
        frozen = as_argv(argv)
        with self._lock:
            self.commands.append(frozen)
            rule = next((r for r in reversed(self.rules) if r.matches(frozen)), None)
        if rule is None:
            return CommandResult(self.name, frozen, 0, "", "", 0.0)
        if rule.raises is not None:
            raise rule.raises
        got = rule.respond(frozen)
        a = Answer(got) if isinstance(got, str) else got
        return CommandResult(self.name, frozen, a.exit_code, a.stdout, a.stderr, a.duration_s)

    # -- the Connection API ----------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return True

    def open(self) -> FakeConnection:
        return self

    def close(self) -> None:
        self.closes += 1

    def run(self, argv: Sequence[str], *, timeout: float | None = None, check: bool = True,
            stdin: str | bytes | None = None,
            env: Mapping[str, str] | None = None) -> CommandResult:
        result = self.answer(argv)
        if check and not result.ok:
            raise RemoteCommandFailed(result)
        return result

    def start(self, argv: Sequence[str], *,
              env: Mapping[str, str] | None = None) -> RemoteProcess:
        return FakeProcess(self, self.answer(argv))

    def put(self, local: str | Path, remote: str, *, mode: int | None = None) -> None:
        self.files[remote] = Path(local).read_text(errors="replace")

    def get(self, remote: str, local: str | Path) -> None:
        Path(local).write_text(self.read_text(remote))

    def read_text(self, remote: str) -> str:
        if remote not in self.files:
            raise HostError(f"{self.name}: cannot read {remote}: no such file")
        return self.files[remote]

    def write_text(self, remote: str, text: str) -> None:
        self.files[remote] = text


class FakeProcess(RemoteProcess):
    """A background process of a :class:`FakeConnection`: runs until stopped or waited for,
    then reports the answer of its command."""

    def __init__(self, conn: FakeConnection, result: CommandResult) -> None:
        self.conn = conn
        self.argv = result.argv
        self.pid = 4242
        self._fake_result = result
        self._alive = True

    def running(self) -> bool:
        return self._alive

    def wait(self, timeout: float | None = None) -> CommandResult:
        self._alive = False
        return self._fake_result

    def stop(self, timeout: float = 5.0) -> CommandResult:
        return self.wait()

    def kill(self) -> CommandResult:
        return self.wait()
