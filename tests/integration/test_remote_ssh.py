"""The SSH layer against real sshd: commands, quoting, timeouts, background processes, SFTP,
host groups."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from workbench.errors import CommandTimeout, HostError, HostGroupError, RemoteCommandFailed
from workbench.remote import Connection, run_all

pytestmark = pytest.mark.lab


def test_run_returns_output_and_exit_code(compute):
    res = compute.run(["sh", "-c", 'echo out; echo err >&2; exit "$1"', "x", "3"], check=False)
    assert (res.exit_code, res.stdout, res.stderr) == (3, "out\n", "err\n")
    assert res.host == "compute1" and res.duration_s > 0


def test_failure_message_names_host_command_code_and_stderr(compute):
    with pytest.raises(RemoteCommandFailed) as ei:
        compute.run(["ls", "/nonexistent-nimo-dir"])
    msg = str(ei.value)
    assert isinstance(ei.value, RemoteCommandFailed)
    assert "compute1" in msg and "ls /nonexistent-nimo-dir" in msg
    assert "exited 2" in msg and "No such file" in msg


def test_stdin_and_env(compute):
    assert compute.run(["cat"], stdin="a b\n").stdout == "a b\n"
    res = compute.run(["sh", "-c", 'printf %s "$NIMO_X"'], env={"NIMO_X": "v w"})
    assert res.stdout == "v w"


def test_shell_metacharacters_never_reach_a_shell(compute):
    marker = f"/tmp/nimo-pwned-{uuid.uuid4().hex}"
    evil = f"/tmp/x; touch {marker}"
    assert compute.run(["echo", evil]).stdout == evil + "\n"
    assert compute.run(["ls", evil], check=False).exit_code != 0
    sub = f"$(touch {marker})`touch {marker}`"
    assert compute.run(["echo", sub]).stdout == sub + "\n"
    res = compute.run(["sh", "-c", 'printf %s "$V"'], env={"V": sub})
    assert res.stdout == sub
    compute.run(["true"], timeout=5, env={"A": f"'; touch {marker}; '"})
    assert not Path(marker).exists()


def test_timeout_kills_the_remote_command_and_its_children(compute):
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout) as ei:
        compute.run(["sh", "-c", "sleep 7.123 & sleep 7.123; wait"], timeout=1)
    assert time.monotonic() - t0 < 4
    assert isinstance(ei.value, RemoteCommandFailed)
    assert "compute1" in str(ei.value) and "timeout" in str(ei.value)
    time.sleep(0.2)
    ps = compute.run(["ps", "-eo", "args"]).stdout
    assert "sleep 7.123" not in ps


def test_background_process_start_and_stop(compute):
    proc = compute.start(["sh", "-c", "echo started; exec sleep 30"])
    assert proc.pid > 0 and proc.running()
    assert compute.run(["kill", "-0", str(proc.pid)]).ok
    res = proc.stop(timeout=2)
    assert "started" in res.stdout
    assert not proc.running()
    assert compute.run(["kill", "-0", str(proc.pid)], check=False).exit_code != 0


def test_sftp_roundtrip(compute, tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(200_000))
    remote = f"/tmp/nimo-sftp-{uuid.uuid4().hex}"
    try:
        compute.put(src, remote)
        compute.get(remote, tmp_path / "back.bin")
        assert (tmp_path / "back.bin").read_bytes() == src.read_bytes()
        compute.write_text(remote, "hello\n")
        assert compute.read_text(remote) == "hello\n"
    finally:
        compute.run(["rm", "-f", remote])


def test_sftp_from_many_threads_on_one_connection(compute, tmp_path):
    """Uploads from several threads share one connection without hanging or mixing files."""
    from concurrent.futures import ThreadPoolExecutor

    files = {}
    for i in range(6):
        files[i] = tmp_path / f"f{i}.bin"
        files[i].write_bytes(os.urandom(300_000 + i))
    tag = uuid.uuid4().hex

    def roundtrip(i: int) -> bytes:
        remote = f"/tmp/nimo-sftp-{tag}-{i}"
        compute.put(files[i], remote)
        compute.get(remote, tmp_path / f"back{i}.bin")
        return (tmp_path / f"back{i}.bin").read_bytes()

    try:
        with ThreadPoolExecutor(6) as pool:
            back = list(pool.map(roundtrip, files, timeout=120))
        assert back == [files[i].read_bytes() for i in files]
    finally:
        compute.run(["sh", "-c", 'rm -f /tmp/nimo-sftp-"$1"-*', "x", tag])


def test_many_short_commands_never_drop_the_connection(compute, lab):
    """Commands that end at once, from several threads: the client never sends an EOF for a
    channel the server already closed (OpenSSH drops the whole connection for that)."""
    from concurrent.futures import ThreadPoolExecutor

    compute.run(["true"])
    transport = compute._client.get_transport()
    log = lab.dir / "hosts" / compute.name / "sshd.log"
    before = log.read_text().count("nonexistent channel") if log.exists() else 0

    def burst(_: int) -> int:
        return sum(compute.run(["true"]).exit_code == 0 for _ in range(150))

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(burst, range(4))) == 600
    assert compute._client.get_transport() is transport, "the connection was re-opened"
    after = log.read_text().count("nonexistent channel") if log.exists() else 0
    assert after == before


def test_connection_is_lazy_and_reusable(lab):
    conn = lab.connect("storage1")
    assert not conn.is_open
    conn.run(["true"])
    assert conn.is_open
    conn.close()
    assert not conn.is_open
    assert conn.run(["hostname"]).ok  # reopens
    conn.close()


def test_group_collects_per_host_results_and_errors(lab):
    good = [lab.connect(h.name) for h in lab.hosts]
    bad = Connection(f"{lab.subnet_base}.0.250", name="ghost", key_file=lab.key_file,
                     known_hosts=lab.known_hosts, connect_timeout=0.5, retries=0)
    results = run_all([*good, bad], ["hostname"])
    assert {k for k, v in results.items() if not isinstance(v, Exception)} == {
        h.name for h in lab.hosts}
    assert isinstance(results["ghost"], HostError)
    with pytest.raises(HostGroupError) as ei:
        run_all([*good, bad], ["hostname"], raise_on_error=True)
    assert set(ei.value.failures) == {"ghost"} and "ghost" in str(ei.value)
    for c in good:
        c.close()
