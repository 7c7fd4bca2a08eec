"""Pure tests of the SSH layer: command-line building, results and error messages."""

from __future__ import annotations

import shlex

import pytest

from workbench.errors import CommandTimeout, HostError, HostGroupError, RemoteCommandFailed
from workbench.remote import CommandResult, Connection, command_line, map_hosts


def test_command_line_quotes_every_argument():
    evil = "/tmp/x; touch /tmp/pwned"
    line = command_line(["ls", evil, "$(id)", "`id`", "a b", "'q'"])
    assert shlex.split(line) == ["ls", evil, "$(id)", "`id`", "a b", "'q'"]
    assert "; touch" not in line.replace(shlex.quote(evil), "")


def test_command_line_wrappers_are_argv_too():
    line = command_line(["sleep", "5"], timeout=2.5, env={"A": "x y"})
    assert shlex.split(line) == ["env", "A=x y", "timeout", "--signal=KILL", "2.500s",
                                 "sleep", "5"]
    started = shlex.split(command_line(["a b"], announce_pid=True))
    assert started[:2] == ["sh", "-c"] and started[-1] == "a b"


@pytest.mark.parametrize("bad", ["ls -l", b"ls", [], ["ok", 3], ["nul\x00"]])
def test_argv_must_be_a_list_of_strings(bad):
    with pytest.raises((TypeError, ValueError)):
        command_line(bad)


def test_env_names_are_validated():
    with pytest.raises(ValueError):
        command_line(["true"], env={"A;B": "1"})
    with pytest.raises(ValueError):
        command_line(["true"], timeout=0)


def _result(code=2, stderr="boom\n"):
    return CommandResult("h1", ("cp", "a b", "c"), code, "", stderr, 0.1)


def test_command_failed_message_names_host_command_code_and_stderr_tail():
    err = RemoteCommandFailed(_result(stderr="x" * 1000 + "the end\n"))
    assert isinstance(err, RemoteCommandFailed)
    msg = str(err)
    assert msg.startswith("h1: `cp 'a b' c` exited 2: ...")
    assert msg.endswith("the end") and len(msg) < 500
    assert err.result.exit_code == 2


def test_command_timeout_is_a_command_failure():
    err = CommandTimeout(_result(code=137, stderr=""), 1.5)
    assert isinstance(err, RemoteCommandFailed) and isinstance(err, RemoteCommandFailed)
    assert "1.5 s timeout" in str(err) and err.result.host == "h1"


def test_result_is_frozen():
    r = _result()
    assert not r.ok and r.command == "cp 'a b' c"
    with pytest.raises(AttributeError):
        r.exit_code = 0  # type: ignore[misc]


def test_connection_is_inert_until_used(tmp_path):
    conn = Connection("192.0.2.1", name="x", key_file=tmp_path / "k")
    assert not conn.is_open and "closed" in repr(conn)


def test_missing_key_file_is_a_host_error_without_connecting(tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("")
    conn = Connection("192.0.2.1", name="x", key_file=tmp_path / "nokey", known_hosts=kh,
                      retries=3)
    with pytest.raises(HostError, match="x: key file .* not found"):
        conn.open()


def test_map_hosts_collects_values_and_exceptions():
    class Fake:
        def __init__(self, name):
            self.name = name

    def fn(c):
        if c.name == "bad":
            raise HostError("bad: unreachable")
        return c.name.upper()

    res = map_hosts([Fake("a"), Fake("bad")], fn)
    assert res["a"] == "A" and isinstance(res["bad"], HostError)
    with pytest.raises(HostGroupError) as ei:
        map_hosts([Fake("a"), Fake("bad")], fn, raise_on_error=True)
    assert list(ei.value.failures) == ["bad"] and "1 of 2 hosts failed" in str(ei.value)


def test_a_host_that_never_sends_its_banner_is_unreachable_in_one_line(tmp_path, capfd):
    """A port that accepts TCP and stays silent (a hung sshd, a firewall's tarpit): the
    connect fails as transient (unreachable, retried), not as a refused key, and paramiko's
    transport thread prints no traceback."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: [accepted.append(listener.accept()[0]) for _ in range(8)],
                     daemon=True).start()
    known = tmp_path / "known_hosts"
    known.write_text("")
    conn = Connection("127.0.0.1", name="hung", port=listener.getsockname()[1],
                      known_hosts=known, connect_timeout=0.5, retries=1, backoff_s=0.0)
    try:
        with pytest.raises(HostError) as err:
            conn.open()
    finally:
        listener.close()
        for s in accepted:
            s.close()
    assert str(err.value).startswith("hung: unreachable at 127.0.0.1:")
    assert "\n" not in str(err.value) and "authenticate" not in str(err.value)
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "Exception (client)" not in captured.err
