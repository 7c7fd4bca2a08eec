"""Faults: unreachable host, wrong key, host-key mismatch, dropped connection -> one clear
HostError each; transient failures retried, auth/host-key failures never."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

from workbench.errors import HostError
from workbench.remote import Connection

pytestmark = pytest.mark.lab


class CountingConnection(Connection):
    attempts = 0

    def _connect_once(self, handshake):
        self.attempts += 1
        return super()._connect_once(handshake)


def _conn(lab, name="compute1", **kw):
    h = lab.host(name)
    kw.setdefault("key_file", lab.key_file)
    kw.setdefault("known_hosts", lab.known_hosts)
    return CountingConnection(h.address, name=h.name, **kw)


def test_unreachable_host_is_retried_then_reported(lab):
    conn = CountingConnection(f"{lab.subnet_base}.0.251", name="ghost", key_file=lab.key_file,
                              known_hosts=lab.known_hosts, connect_timeout=0.3, retries=2,
                              backoff_s=0.05)
    with pytest.raises(HostError) as ei:
        conn.run(["true"])
    assert conn.attempts == 3
    assert str(ei.value).startswith("ghost: unreachable")


def test_refused_port_is_unreachable(lab):
    conn = _conn(lab, port=2222, retries=1, backoff_s=0.01)
    with pytest.raises(HostError, match="compute1: unreachable .*:2222"):
        conn.open()
    assert conn.attempts == 2


def test_wrong_key_is_rejected_without_retry(lab, tmp_path):
    key = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    conn = _conn(lab, key_file=key, retries=3)
    with pytest.raises(HostError, match="compute1: key .* rejected"):
        conn.open()
    assert conn.attempts == 1


def test_host_key_mismatch_is_rejected_without_retry(lab, tmp_path):
    compute, storage = lab.host("compute1"), lab.host("storage1")
    lines = lab.known_hosts.read_text().splitlines()
    storage_key = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith(storage.address + " "))
    forged = tmp_path / "known_hosts"
    forged.write_text(f"{compute.address} {storage_key}\n")
    conn = _conn(lab, known_hosts=forged, retries=3)
    with pytest.raises(HostError, match="compute1: host key mismatch"):
        conn.open()
    assert conn.attempts == 1


def test_unknown_host_key_is_rejected(lab, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    conn = _conn(lab, known_hosts=empty, retries=3)
    with pytest.raises(HostError, match="not in"):
        conn.open()
    assert conn.attempts == 1


def _children(pid: int) -> set[int]:
    out = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.add(int(p))
            except OSError:
                pass
    return out


def drop_connection_during(lab, conn: Connection, argv, after_s: float = 0.5) -> BaseException:
    """Run ``argv`` on ``conn`` and kill its sshd session process from the root side."""
    listener = lab.sshd_pid(conn.name)
    before = _children(listener)
    conn.open()
    ours = _children(listener) - before
    assert len(ours) == 1, ours
    caught: list[BaseException] = []

    def target():
        try:
            conn.run(argv)
        except BaseException as e:
            caught.append(e)

    t = threading.Thread(target=target)
    t.start()
    time.sleep(after_s)
    os.kill(ours.pop(), signal.SIGKILL)
    t.join(10)
    assert not t.is_alive()
    assert caught, "the command should have failed"
    return caught[0]


def test_dropped_connection_mid_command(lab):
    conn = _conn(lab)
    err = drop_connection_during(lab, conn, ["sleep", "20"])
    assert isinstance(err, HostError)
    assert str(err).startswith("compute1: connection dropped")
    assert conn.run(["true"]).ok  # the next call reconnects
    conn.close()


def test_invalid_key_file_is_not_retried(lab, tmp_path):
    key = tmp_path / "garbage_key"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n"
                   "-----END OPENSSH PRIVATE KEY-----\n")
    conn = _conn(lab, key_file=key, retries=3)
    with pytest.raises(HostError, match="compute1: "):
        conn.open()
    assert conn.attempts == 1
