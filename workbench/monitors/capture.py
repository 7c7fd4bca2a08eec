"""Packet capture on the data interface: ``dumpcap`` during the run, one ``tshark -r`` pass
after it giving io,stat per direction, TCP ACK RTTs and (for NFS) ``rpc,srt``."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from workbench.remote import Connection, RemoteProcess

SNAPLEN = "160"  # headers only: RPC/NFS header fits, payload is not kept
NFS_PROGRAM = "100003"
# Kill PID $1 only if its command line still contains $2 (no PID-reuse accidents).
_KILL_IF = 'grep -q -- "$2" "/proc/$1/cmdline" 2>/dev/null && kill -KILL "$1"; exit 0'


def kill_by_pid(conn: Connection, pid: int, name: str) -> None:
    """SIGKILL a monitor by PID if it is still that program; never raises."""
    if pid > 0:
        with contextlib.suppress(Exception):
            conn.run(["sh", "-c", _KILL_IF, "nimo-kill", str(pid), name], check=False,
                     timeout=10)


def discard(conn: Connection, proc: RemoteProcess | None, program: str, path: str) -> None:
    """Kill a monitor process (by PID, also when its SSH channel is gone) and remove its
    output file; never raises."""
    if proc is not None:
        kill_by_pid(conn, proc.pid, program)
        with contextlib.suppress(Exception):
            proc.kill()
    with contextlib.suppress(Exception):
        conn.run(["rm", "-f", path], check=False, timeout=10)


@dataclass(frozen=True)
class CaptureResult:
    """Raw tshark analysis text (parsed by workbench.collector.tshark) and capture facts."""

    text: str
    local: str
    peer: str
    nfs: bool
    analysis_s: float


class PacketCapture:
    """dumpcap on ``iface`` limited to traffic with ``peer``; analysed on the same host."""

    def __init__(self, conn: Connection, iface: str, local: str, peer: str, path: str,
                 nfs_version: int | None = None, max_s: float = 3600.0) -> None:
        self.conn = conn
        self.iface = iface
        self.local = local
        self.peer = peer
        self.path = path
        self.nfs_version = nfs_version
        self.max_s = max_s
        self._proc: RemoteProcess | None = None

    def start(self, ready_timeout: float = 5.0) -> None:
        """Start dumpcap and wait until it writes its capture file (capturing has begun)."""
        self._proc = self.conn.start(
            ["dumpcap", "-q", "-i", self.iface, "-s", SNAPLEN, "-f", f"host {self.peer}",
             "-a", f"duration:{int(self.max_s)}", "-w", self.path])
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.conn.run(["test", "-s", self.path], check=False, timeout=10).ok:
                return
            if not self._proc.running():
                break
            time.sleep(0.02)
        res = self._proc.kill()
        self._proc = None
        raise RuntimeError(f"{self.conn.name}: dumpcap on {self.iface} did not start: "
                           f"{res.stderr.strip()[-200:]}")

    def halt(self) -> None:
        """Stop dumpcap (the capture file stays for :meth:`stop`)."""
        if self._proc is not None:
            self._proc.stop(timeout=3.0)
            self._proc = None

    def stop(self) -> CaptureResult:
        """Stop dumpcap and analyse the capture file in one tshark pass."""
        self.halt()
        t0 = time.monotonic()
        argv = ["tshark", "-n", "-r", self.path, "-Y", "tcp.analysis.ack_rtt", "-T", "fields",
                "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.analysis.ack_rtt",
                "-z", f"io,stat,0,ip.src=={self.local} && tcp.len>0,"
                      f"ip.src=={self.peer} && tcp.len>0"]
        if self.nfs_version:
            argv += ["-z", f"rpc,srt,{NFS_PROGRAM},{self.nfs_version}"]
        r = self.conn.run(argv, timeout=120)
        return CaptureResult(r.stdout, self.local, self.peer, bool(self.nfs_version),
                             time.monotonic() - t0)

    def cleanup(self) -> None:
        """Kill dumpcap (by PID, also when its SSH channel is gone) and remove the capture
        (idempotent). dumpcap also stops by itself after ``max_s`` (``-a duration``)."""
        discard(self.conn, self._proc, "dumpcap", self.path)
        self._proc = None
