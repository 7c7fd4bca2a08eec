"""Reading paramiko channels: a command's output until it exits, and background processes
(:class:`RemoteProcess`, started by ``Connection.start``)."""

from __future__ import annotations

import contextlib
import select
import threading
import time
from typing import TYPE_CHECKING

import paramiko

from workbench.errors import HostError
from workbench.remote.liveness import Pulse
from workbench.remote.result import CommandResult, quote_argv

if TYPE_CHECKING:
    from workbench.remote.connection import Connection


def drain(
    chan: paramiko.Channel, deadline: float | None, pulse: Pulse | None = None
) -> tuple[str, str, int | None]:
    """Read stdout/stderr until the command exits, the channel dies, or ``deadline`` passes;
    with ``pulse``, raise ``liveness.Silent`` once the host stops answering keepalives."""
    out: list[bytes] = []
    err: list[bytes] = []
    wait = 0.001  # poll fast at first (short commands), back off to 50 ms for long ones
    while True:
        select.select([chan], [], [], wait)
        wait = min(0.05, wait * 1.5)
        while chan.recv_ready():
            out.append(chan.recv(65536))
            wait = 0.001
        while chan.recv_stderr_ready():
            err.append(chan.recv_stderr(65536))
            wait = 0.001
        if (
            chan.exit_status_ready()
            and chan.eof_received
            and not chan.recv_ready()
            and not chan.recv_stderr_ready()
        ):
            code: int | None = chan.recv_exit_status()
            break
        if chan.closed:
            code = chan.recv_exit_status() if chan.exit_status_ready() else None
            break
        if deadline is not None and time.monotonic() >= deadline:
            code = None
            break
        if pulse is not None:
            pulse.check()
    return b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace"), code



class RemoteProcess:
    """A background process started by :meth:`Connection.start`; output is drained into memory."""

    def __init__(self, conn: Connection, argv: tuple[str, ...], chan: paramiko.Channel) -> None:
        self.conn = conn
        self.argv = argv
        self._chan = chan
        self._started = time.monotonic()
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._code: int | None = None
        self._pid_ready = threading.Event()
        self.pid: int = -1
        self._thread = threading.Thread(target=self._pump, daemon=True, name=f"nimo-{conn.name}")
        self._thread.start()
        if not self._pid_ready.wait(conn.connect_timeout) or self.pid < 0:
            raise HostError(f"{conn.name}: `{quote_argv(argv)}` did not start")

    def _pump(self) -> None:
        buf = b""
        chan = self._chan
        try:
            while True:
                r, _, _ = select.select([chan], [], [], 0.2)
                if chan.recv_ready():
                    data = chan.recv(65536)
                    if self.pid < 0:
                        buf += data
                        if b"\n" in buf:
                            first, rest = buf.split(b"\n", 1)
                            with contextlib.suppress(ValueError):
                                self.pid = int(first)
                            self._pid_ready.set()
                            self._out.append(rest)
                    else:
                        self._out.append(data)
                if chan.recv_stderr_ready():
                    self._err.append(chan.recv_stderr(65536))
                if chan.closed or (
                    chan.exit_status_ready()
                    and chan.eof_received
                    and not chan.recv_ready()
                    and not chan.recv_stderr_ready()
                ):
                    break
        except OSError:
            pass
        if chan.exit_status_ready():
            self._code = chan.recv_exit_status()
        self._pid_ready.set()
        chan.close()

    @property
    def host(self) -> str:
        return self.conn.name

    def running(self) -> bool:
        """True while the process has not exited (as seen through its SSH channel)."""
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> CommandResult:
        """Wait for exit; raise :class:`HostError` if still running after ``timeout``."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise HostError(f"{self.host}: `{quote_argv(self.argv)}` still running")
        return self._result()

    def _result(self) -> CommandResult:
        return CommandResult(
            self.host,
            self.argv,
            -1 if self._code is None else self._code,
            b"".join(self._out).decode(errors="replace"),
            b"".join(self._err).decode(errors="replace"),
            time.monotonic() - self._started,
        )

    def _signal(self, sig: str) -> None:
        if self.pid > 0 and self.running():
            self.conn.run(["kill", f"-{sig}", str(self.pid)], check=False, timeout=10)

    def stop(self, timeout: float = 5.0) -> CommandResult:
        """SIGTERM, wait up to ``timeout`` s, then SIGKILL; returns the output gathered."""
        self._signal("TERM")
        self._thread.join(timeout)
        if self._thread.is_alive():
            return self.kill()
        return self._result()

    def kill(self) -> CommandResult:
        """SIGKILL now and return the output gathered."""
        self._signal("KILL")
        self._thread.join(5.0)
        if self._thread.is_alive():
            self._chan.close()
            self._thread.join(1.0)
        return self._result()
