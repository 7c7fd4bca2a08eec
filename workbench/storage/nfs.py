"""A userspace NFSv4 server (nfs-ganesha, FSAL VFS) exporting the dataset on the storage host.

Algorithm 2 step 1 ("instantiate an NFS server on S, export I"). NFSv4 only, so no rpcbind is
needed; bound to the storage host's data-path address, read-only. Everything lives in a
private ``/tmp/nimo-<run>-nfs-XXXXXX.<host>/`` (config, pid, log, recovery dir) and the daemon
is stopped by PID on teardown (``workbench.clean`` also ends it: its argv names that dir).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

from workbench.emulation.common import check_run_id, run_checked
from workbench.emulation.hostobjects import private_dir
from workbench.errors import EmulationError
from workbench.remote.connection import Connection

GANESHA = "ganesha.nfsd"


def _check_path(value: str, what: str) -> str:
    if not value.startswith("/") or any(c in value for c in '"\n;{}'):
        raise EmulationError(f"{what} {value!r} must be absolute without quotes, ; {{ }}")
    return value


def ganesha_config(export_path: str, *, bind_address: str, port: int, workdir: str,
                   pseudo: str = "/nimo", export_id: int = 77) -> str:
    """Pure: a minimal read-only NFSv4 ganesha configuration."""
    _check_path(export_path, "export path")
    _check_path(workdir, "work dir")
    _check_path(pseudo, "pseudo path")
    if not all(p.isdigit() for p in bind_address.split(".")) or bind_address.count(".") != 3:
        raise EmulationError(f"bind address {bind_address!r} must be an IPv4 address")
    return f"""# nimo- ganesha export (written by workbench.storage.nfs)
NFS_CORE_PARAM {{
    Protocols = 4;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Bind_addr = {bind_address};
    NFS_Port = {int(port)};
}}
NFSV4 {{
    Graceless = true;
    Only_Numeric_Owners = true;
    RecoveryBackend = fs;
    RecoveryRoot = "{workdir}/recovery";
}}
NFS_KRB5 {{ Active_krb5 = false; }}
EXPORT {{
    Export_Id = {int(export_id)};
    Path = "{export_path}";
    Pseudo = "{pseudo}";
    Access_Type = RO;
    Squash = No_Root_Squash;
    SecType = sys;
    Protocols = 4;
    Transports = TCP;
    FSAL {{ Name = VFS; }}
}}
"""


@dataclass
class NfsExport:
    """A running ganesha export on the storage host."""

    host: str
    address: str
    port: int
    export_path: str
    pseudo: str
    workdir: str
    pid: int
    start_s: float = 0.0

    def url(self, path: str = "") -> str:
        """libnfs URL (``nfs-cat``/``nfs-ls``) of ``path`` inside the export."""
        sub = f"/{path.lstrip('/')}" if path else ""
        return f"nfs://{self.address}{self.pseudo}{sub}?version=4&nfsport={self.port}"


def start_nfs_server(storage: Connection, export_path: str, *, bind_address: str,
                     run_id: str, port: int = 2049, timeout_s: float = 10.0) -> NfsExport:
    """Start ganesha exporting ``export_path`` read-only on ``bind_address:port``; returns
    once the port listens. Raises :class:`EmulationError` (with the log tail) otherwise."""
    t0 = time.monotonic()
    check_run_id(run_id)
    if _listening(storage, port):
        raise EmulationError(f"{storage.name}: port {port} is already in use",
                             hint="one NFS export per storage host and port at a time")
    workdir = private_dir(storage, run_id, "nfs")
    conf = ganesha_config(export_path, bind_address=bind_address, port=port, workdir=workdir)
    run_checked(storage, ["mkdir", f"{workdir}/recovery"], "creating NFS work dir")
    storage.write_text(f"{workdir}/ganesha.conf", conf)
    run_checked(storage, [GANESHA, "-f", f"{workdir}/ganesha.conf", "-L",
                          f"{workdir}/ganesha.log", "-p", f"{workdir}/ganesha.pid",
                          "-N", "NIV_EVENT"], "starting nfs-ganesha")
    export = NfsExport(storage.name, bind_address, port, export_path, "/nimo", workdir, -1)
    deadline = time.monotonic() + timeout_s
    while not _listening(storage, port):
        if time.monotonic() > deadline:
            log = storage.run(["tail", "-n", "5", f"{workdir}/ganesha.log"], check=False).stdout
            with contextlib.suppress(Exception):
                stop_nfs_server(storage, export)
            raise EmulationError(f"{storage.name}: nfs-ganesha did not listen on {port}: "
                                 f"{log.strip()[-300:]}")
        time.sleep(0.02)
    pid = storage.run(["cat", f"{workdir}/ganesha.pid"], check=False).stdout.strip()
    export.pid = int(pid) if pid.isdigit() else -1
    export.start_s = time.monotonic() - t0
    return export


def _listening(conn: Connection, port: int) -> bool:
    out = conn.run(["ss", "-Htln", f"sport = :{int(port)}"], check=False, timeout=10).stdout
    return bool(out.strip())


def stop_nfs_server(storage: Connection, export: NfsExport) -> None:
    """Stop the daemon by PID (TERM, then KILL) and remove its work dir; idempotent."""
    script = (
        'p=$(cat "$1/ganesha.pid" 2>/dev/null); if [ -n "$p" ]; then kill -TERM "$p" 2>/dev/null;'
        ' for i in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.02; done;'
        ' kill -KILL "$p" 2>/dev/null; fi; rm -rf "$1"; true'
    )
    storage.run(["sh", "-c", script, "nimo-nfs-stop", export.workdir], timeout=30)
    if _listening(storage, export.port):
        raise EmulationError(f"{storage.name}: NFS port {export.port} still open after stop")


@contextlib.contextmanager
def nfs_exported(storage: Connection, export_path: str, *, bind_address: str, run_id: str,
                 port: int = 2049) -> Iterator[NfsExport]:
    """Context manager around :func:`start_nfs_server`; always stops the server."""
    export = start_nfs_server(storage, export_path, bind_address=bind_address, run_id=run_id,
                              port=port)
    try:
        yield export
    finally:
        stop_nfs_server(storage, export)
