"""A persistent, lazily opened SSH connection to one host (paramiko, key auth only).

Every remote command is an argv list; :func:`workbench.remote.result.command_line` is the
ONE place that turns an argv into the string the remote shell parses (``shlex.join`` via
``quote_argv``), so no inventory value ever reaches a shell unquoted.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import paramiko

from workbench.errors import CommandTimeout, HostError, HostRefused, RemoteCommandFailed
from workbench.remote import liveness
from workbench.remote.channel import RemoteProcess, drain
from workbench.remote.handshakes import (
    Handshake,
    NoBanner,
    banner_received,
    describe,
    keys_exchanged,
    refusal,
)
from workbench.remote.result import CommandResult, as_argv, command_line, quote_argv

# paramiko logs a failed handshake (a host that never sends its banner) with a traceback
# from its transport thread, to stderr without a handler and into `nimo serve`'s log through
# the root logger's. We report the failure ourselves, in one line.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
logging.getLogger("paramiko").propagate = False
LOCAL_GRACE_S = 5.0  # how long after a remote timeout we wait before giving up locally


class Connection:
    """SSH connection to one host: inert until first use, persistent, a context manager.

    Host keys are checked against ``known_hosts`` with paramiko's ``RejectPolicy`` (unknown or
    changed keys are refused); only the given private key is offered. Transient connect failures
    (refused, timeout, reset) are retried with exponential backoff; authentication and host-key
    failures never are.
    """

    def __init__(
        self,
        address: str,
        *,
        name: str | None = None,
        port: int = 22,
        user: str = "root",
        key_file: str | Path | None = None,
        known_hosts: str | Path | None = None,
        connect_timeout: float = 10.0,
        default_timeout: float | None = None,
        retries: int = 3,
        backoff_s: float = 0.2,
        sftp_timeout: float = 60.0,
        alive_interval_s: float | None = 15.0,
    ) -> None:
        self.address = address
        self.name = name or address
        self.port = int(port)
        self.user = user
        self.key_file = Path(key_file) if key_file else None
        self.known_hosts = Path(known_hosts) if known_hosts else None
        self.connect_timeout = connect_timeout
        self.default_timeout = default_timeout
        self.retries = retries
        self.backoff_s = backoff_s
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._lock = threading.RLock()
        self._sftp_lock = threading.Lock()  # one SFTP operation at a time per connection
        self.sftp_timeout = sftp_timeout
        self.alive_interval_s = alive_interval_s  # a command's keepalives (liveness.Pulse)

    @classmethod
    def for_host(cls, host: Any, **kwargs: Any) -> Connection:
        """Connection for an inventory host (duck-typed: name, address, port, user, key_file,
        known_hosts, hung_after_s: three unanswered keepalives, one every third of it)."""
        hung_after_s = getattr(host, "hung_after_s", None)
        if hung_after_s is not None:
            kwargs.setdefault("alive_interval_s", hung_after_s / 3)
        return cls(
            host.address,
            name=host.name,
            port=getattr(host, "port", 22) or 22,
            user=getattr(host, "user", "root") or "root",
            key_file=getattr(host, "key_file", None),
            known_hosts=getattr(host, "known_hosts", None),
            **kwargs,
        )

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"Connection({self.name!r}, {self.user}@{self.address}:{self.port}, {state})"

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        """True when an authenticated transport is active."""
        client = self._client
        transport = client.get_transport() if client else None
        return bool(transport and transport.is_active())

    def open(self) -> Connection:
        """Connect now (idempotent); raise :class:`HostError` with a one-line reason."""
        with self._lock:
            cut = self._cut_for_good()
            if cut is not None:
                raise HostError(f"{self.name}: {cut}")
            if self.is_open:
                return self
            self._drop()
            last: Exception | None = None
            handshake = Handshake()
            for attempt in range(self.retries + 1):
                try:
                    self._client = self._connect_once(handshake)
                    liveness.opened(self)
                    return self
                except HostError:
                    raise
                except (OSError, paramiko.SSHException, EOFError) as e:
                    last = e
                    if handshake.abandoned():
                        raise HostError(f"{self.name}: connecting to {self.address}:"
                                        f"{self.port} abandoned: interrupted") from None
                    if isinstance(e, NoBanner) and e.timed_out:
                        break  # a hung sshd: waiting for its banner again is no retry
                    if attempt < self.retries:
                        time.sleep(self.backoff_s * (2**attempt))
            raise HostError(
                f"{self.name}: unreachable at {self.address}:{self.port} "
                f"after {attempt + 1} attempt{'s' if attempt else ''}: {describe(last)}",
                hint="check the address, port and that sshd runs on the host",
            )

    def _connect_once(self, handshake: Handshake) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        began = time.monotonic()
        try:
            self._trust_host_keys(client)
            if self.key_file is not None and not self.key_file.is_file():
                raise HostRefused(f"{self.name}: key file {self.key_file} not found")
            sock = socket.create_connection((self.address, self.port), self.connect_timeout)
            # without TCP_NODELAY every channel open waits ~40 ms for a delayed ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with handshake.holding(sock):
                client.connect(
                    sock=sock, hostname=self.address, port=self.port, username=self.user,
                    key_filename=str(self.key_file) if self.key_file else None,
                    timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                    auth_timeout=self.connect_timeout, allow_agent=False, look_for_keys=False,
                )
        except (paramiko.SSHException, OSError, EOFError, ValueError) as e:
            handshake_done = keys_exchanged(client)
            banner = banner_received(client)
            client.close()
            refused = refusal(self, e, handshake_done)
            if refused is not None:
                raise refused from None
            if not banner and isinstance(e, paramiko.SSHException):
                waited = time.monotonic() - began
                raise NoBanner(self.connect_timeout if waited >= self.connect_timeout * 0.9
                               else None, e) from None
            raise e from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(15)
        return client

    def _trust_host_keys(self, client: paramiko.SSHClient) -> None:
        """Known hosts from ``known_hosts`` (or the system's); unknown keys are refused."""
        if self.known_hosts is not None:
            if not self.known_hosts.is_file():
                raise HostRefused(f"{self.name}: known_hosts file {self.known_hosts} not found")
            client.load_host_keys(str(self.known_hosts))
        else:
            client.load_system_host_keys()
        client.set_missing_host_key_policy(paramiko.RejectPolicy())

    def answers(self, within_s: float) -> bool | None:
        """Whether the host answers a keepalive within ``within_s`` (None: not open)."""
        client = self._client
        transport = client.get_transport() if client else None
        if transport is None or not transport.is_active():
            return None
        return liveness.keepalive_answered(transport, within_s)

    def cut(self, reason: str, *, for_good: bool = True) -> None:
        """Close the connection: the commands waiting on it end now; ``for_good``, every
        later command or connect fails at once with ``reason`` (``workbench.remote.
        liveness``), else a later command reconnects. Takes no lock: a thread may hold it,
        connecting or waiting."""
        if for_good:
            liveness.silence((self.address, self.port), reason)
        client = self._client
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    def _cut_for_good(self) -> str | None:
        """Why the host was cut for the rest of the process (``cut``), or None."""
        return liveness.silenced((self.address, self.port))

    def _drop(self) -> None:
        liveness.closed(self)
        if self._sftp is not None:
            with contextlib.suppress(Exception):
                self._sftp.close()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        self._sftp = None
        self._client = None

    def close(self) -> None:
        """Close the connection (idempotent); a later call reopens it."""
        with self._lock:
            self._drop()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transport(self) -> paramiko.Transport:
        self.open()
        assert self._client is not None
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            raise HostError(f"{self.name}: connection dropped")
        return transport

    # -- commands --------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        check: bool = True,
        stdin: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``argv`` on the host and wait for it.

        Raises:
            RemoteCommandFailed (a ``RemoteCommandFailed``): non-zero exit and ``check``.
            CommandTimeout: the command exceeded ``timeout`` (default ``default_timeout``);
                it was killed on the host with SIGKILL.
            HostError: cannot connect, or the connection dropped mid-command.
        """
        frozen = as_argv(argv)
        timeout = self.default_timeout if timeout is None else timeout
        line = command_line(frozen, timeout=timeout, env=env, stdin_null=stdin is None)
        started = time.monotonic()
        chan = self._open_channel(line, frozen)
        try:
            if stdin is not None:  # the command reads stdin, so it cannot end before our EOF
                chan.sendall(stdin.encode() if isinstance(stdin, str) else stdin)
                chan.shutdown_write()
            deadline = None if timeout is None else started + timeout + LOCAL_GRACE_S
            out, err, code = drain(chan, deadline, self._pulse(chan))
        except liveness.Silent as e:
            self.cut(str(e), for_good=False)
            raise HostError(f"{self.name}: `{quote_argv(frozen)}` abandoned: {e}",
                            hint="the connection was closed; the next command reconnects"
                            ) from None
        except OSError as e:
            self._note_drop()
            raise HostError(
                f"{self.name}: connection dropped while running `{quote_argv(frozen)}`: {e}"
            ) from None
        finally:
            chan.close()
        duration = time.monotonic() - started
        # paramiko reports -1 when no exit status came (killed by a signal, or the link died)
        if code in (None, -1) and not self.is_open:
            self._note_drop()
            cut = self._cut_for_good()
            if cut is not None:
                raise HostError(f"{self.name}: `{quote_argv(frozen)}` abandoned: {cut}")
            raise HostError(
                f"{self.name}: connection dropped while running `{quote_argv(frozen)}`",
                hint="the SSH session ended before the command reported an exit status",
            )
        result = CommandResult(self.name, frozen, -1 if code is None else code, out, err, duration)
        if timeout is not None and (
            code is None or (code in (-1, 124, 137) and duration >= timeout * 0.98)
        ):
            raise CommandTimeout(result, timeout)
        if check and result.exit_code != 0:
            raise RemoteCommandFailed(result)
        return result

    def _pulse(self, chan: paramiko.Channel) -> liveness.Pulse | None:
        if self.alive_interval_s is None:
            return None
        return liveness.Pulse(chan.get_transport(), self.alive_interval_s)

    def start(
        self, argv: Sequence[str], *, env: Mapping[str, str] | None = None
    ) -> RemoteProcess:
        """Start ``argv`` in the background (e.g. a monitor); returns once its PID is known."""
        frozen = as_argv(argv)
        line = command_line(frozen, env=env, announce_pid=True, stdin_null=True)
        chan = self._open_channel(line, frozen)
        return RemoteProcess(self, frozen, chan)

    def _open_channel(self, line: str, argv: tuple[str, ...]) -> paramiko.Channel:
        transport = self._transport()
        try:
            chan = transport.open_session(timeout=self.connect_timeout)
            chan.exec_command(line)
            return chan
        except (paramiko.SSHException, OSError, EOFError) as e:
            self._note_drop()
            raise HostError(
                f"{self.name}: connection dropped before `{quote_argv(argv)}` could start: "
                f"{describe(e)}"
            ) from None

    def _note_drop(self) -> None:
        if not self.is_open:
            with self._lock:
                self._drop()

    # -- files -----------------------------------------------------------------------------
    def sftp(self) -> paramiko.SFTPClient:
        """The (cached) SFTP session; its channel times out after ``sftp_timeout`` s."""
        with self._lock:
            transport = self._transport()
            if self._sftp is None:
                sftp = paramiko.SFTPClient.from_transport(transport)
                channel = sftp.get_channel() if sftp is not None else None
                if sftp is None or channel is None:
                    raise HostError(f"{self.name}: cannot open an SFTP session")
                channel.settimeout(self.sftp_timeout)
                self._sftp = sftp
            return self._sftp

    @contextlib.contextmanager
    def _file_op(self, what: str) -> Iterator[paramiko.SFTPClient]:
        """Serialise SFTP operations (one paramiko SFTP session is not safe to share between
        threads) and turn failures into one-line ``HostError``s. A timed-out session is
        dropped, so the next operation opens a fresh one."""
        with self._sftp_lock:
            try:
                yield self.sftp()
            except TimeoutError:
                with self._lock:
                    if self._sftp is not None:
                        with contextlib.suppress(Exception):
                            self._sftp.close()
                        self._sftp = None
                raise HostError(f"{self.name}: {what}: no answer within "
                                f"{self.sftp_timeout:g} s") from None
            except OSError as e:
                raise HostError(f"{self.name}: {what}: {e}") from None

    def put(self, local: str | Path, remote: str, *, mode: int | None = None) -> None:
        """Copy a local file to ``remote`` over SFTP (optionally chmod it)."""
        with self._file_op(f"cannot upload {local} to {remote}") as sftp:
            sftp.put(str(local), remote)
            if mode is not None:
                sftp.chmod(remote, mode)

    def get(self, remote: str, local: str | Path) -> None:
        """Copy ``remote`` to a local file over SFTP."""
        with self._file_op(f"cannot download {remote}") as sftp:
            sftp.get(remote, str(local))

    def read_text(self, remote: str) -> str:
        """Read a remote text file over SFTP."""
        with self._file_op(f"cannot read {remote}") as sftp, sftp.open(remote, "r") as f:
            return f.read().decode()

    def write_text(self, remote: str, text: str) -> None:
        """Write (replace) a remote text file over SFTP."""
        with self._file_op(f"cannot write {remote}") as sftp, sftp.open(remote, "w") as f:
            f.write(text.encode())
