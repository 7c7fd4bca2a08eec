"""SSH layer: persistent key-auth connections, argv-only commands, concurrent groups.

Public API (stable)::

    Connection(address, *, name=None, port=22, user="root", key_file=None, known_hosts=None,
               connect_timeout=10.0, default_timeout=None, retries=3, backoff_s=0.2)
    Connection.for_host(host, **kw)          # from an inventory Host (name, address, port, ...)
    conn.open() / conn.close() / with conn: ...   # lazy: first run() opens it
    conn.run(argv, *, timeout=None, check=True, stdin=None, env=None) -> CommandResult
    conn.start(argv, *, env=None) -> RemoteProcess  # .pid, .running(), .wait(t), .stop(t), .kill()
    conn.put(local, remote, *, mode=None) / conn.get(remote, local)
    conn.read_text(remote) -> str / conn.write_text(remote, text)
    command_line(argv, *, timeout=None, env=None, announce_pid=False) -> str  # the one shlex.join
    CommandResult(host, argv, exit_code, stdout, stderr, duration_s)  # frozen; .ok, .command
    map_hosts(conns, fn, *, raise_on_error=False) -> {host: value | exception}
    run_all(conns, argv, *, timeout=None, check=True, raise_on_error=False)
    HostGroupError(results)                   # .results, .failures

Errors: ``HostError`` (unreachable, key rejected, host key unknown/mismatch, connection
dropped), ``RemoteCommandFailed`` (``.result``), ``CommandTimeout`` (a ``RemoteCommandFailed``; the
command was SIGKILLed on the host); all defined in ``workbench.errors``.
"""

from workbench.errors import CommandTimeout, HostError, HostGroupError, RemoteCommandFailed
from workbench.remote.connection import Connection, RemoteProcess
from workbench.remote.group import map_hosts, run_all
from workbench.remote.result import CommandResult, command_line

__all__ = [
    "CommandResult",
    "CommandTimeout",
    "Connection",
    "HostError",
    "HostGroupError",
    "RemoteCommandFailed",
    "RemoteProcess",
    "command_line",
    "map_hosts",
    "run_all",
]
