"""A multi-host lab on one Linux machine: one network namespace + sshd per host.

Topology (``base`` = subnet base, default ``10.77``)::

    root ns: bridge <prefix>br0 = base.0.1/24 --veth-- each host's eth0 = base.0.(10+i)
    data path: storage has one address base.1.1 on every link (point-to-point /32 routes);
               compute k: data0 = base.1.(10+k) <--veth--> storage data<k-1>

No default route anywhere: traffic cannot leave the lab. State goes to DIR/lab.json;
``Lab.down()`` removes everything it lists (idempotent).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import socket
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from workbench.errors import LabError
from workbench.lab.netns import cgroup_mounts, netns_list, netns_pids, sh, terminate
from workbench.remote.connection import Connection

DEFAULT_PREFIX = os.environ.get("NIMO_LAB_PREFIX", "nimo-")
DEFAULT_SUBNET = os.environ.get("NIMO_LAB_SUBNET", "10.77")
DEFAULT_DIR = ".lab"
EXAMPLE_INVENTORY = Path(__file__).resolve().parents[2] / "inventories" / "example.yaml"
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,6}-$")
_BASE_RE = re.compile(r"^10\.(\d{1,3})$")


@dataclass(frozen=True)
class LabHost:
    """One lab host (a network namespace with its own sshd)."""

    name: str
    role: str
    netns: str
    address: str
    data_iface: str
    data_address: str
    peer: str | None = None
    port: int = 22
    user: str = "root"

    @property
    def hostname(self) -> str:
        """The UTS host name inside the namespace (= the netns name, unique per lab)."""
        return self.netns


def plan_hosts(n: int, prefix: str, base: str) -> list[LabHost]:
    """Pure: the hosts of an ``n``-host lab (1 storage, ``n-1`` compute)."""
    if n < 2:
        raise LabError(f"a lab needs at least 2 hosts (1 storage + 1 compute), got {n}")
    if n > 20:
        raise LabError(f"at most 20 hosts, got {n}")
    hosts = [LabHost("storage1", "storage", f"{prefix}storage1", f"{base}.0.11", "data0",
                     f"{base}.1.1")]
    for k in range(1, n):
        hosts.append(LabHost(f"compute{k}", "compute", f"{prefix}compute{k}",
                             f"{base}.0.{11 + k}", "data0", f"{base}.1.{10 + k}", "storage1"))
    return hosts


class Lab:
    """Build (``up``) and remove (``down``) a namespace lab; also a context manager.

    Attributes for tests: ``dir``, ``inventory_path``, ``hosts`` (list of :class:`LabHost`),
    ``known_hosts``, ``key_file``.
    """

    def __init__(self, dir: str | Path = DEFAULT_DIR, *, hosts: int = 3,
                 prefix: str = DEFAULT_PREFIX, subnet_base: str = DEFAULT_SUBNET) -> None:
        if not _PREFIX_RE.match(prefix):
            raise LabError(f"invalid prefix {prefix!r}", hint="2-8 chars like 'nimo-' or 'lb2-'")
        m = _BASE_RE.match(subnet_base)
        if not m or int(m.group(1)) > 255:
            raise LabError(f"invalid subnet base {subnet_base!r}", hint="like 10.77")
        self.dir = Path(dir).resolve()
        self.prefix = prefix
        self.subnet_base = subnet_base
        self.n = hosts
        self.hosts: list[LabHost] = plan_hosts(hosts, prefix, subnet_base)
        self.bridge = f"{prefix}br0"
        self.sshd_pids: dict[str, int] = {}
        self.timings: dict[str, float] = {}
        if self.state_path.exists():
            self._load_state()

    # -- paths -----------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.dir / "lab.json"

    @property
    def inventory_path(self) -> Path:
        return self.dir / "inventory.yaml"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def key_file(self) -> Path:
        return self.dir / "id_ed25519"

    @property
    def export_dir(self) -> Path:
        """Directory the storage host exports (the lab hosts share this machine's files)."""
        return self.dir / "export"

    def host(self, name: str) -> LabHost:
        for h in self.hosts:
            if h.name == name:
                return h
        raise LabError(f"no lab host {name!r}", hint="valid: " + ", ".join(self.host_names))

    @property
    def host_names(self) -> list[str]:
        return [h.name for h in self.hosts]

    def connect(self, name: str, **kwargs: Any) -> Connection:
        """A (lazy) connection to a lab host with the lab's key and known_hosts."""
        h = self.host(name)
        return Connection(h.address, name=h.name, port=h.port, user=h.user,
                          key_file=self.key_file, known_hosts=self.known_hosts, **kwargs)

    def sshd_pid(self, name: str) -> int:
        return self.sshd_pids[name]

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- state -----------------------------------------------------------------------------
    def _save_state(self) -> None:
        state = {"prefix": self.prefix, "subnet_base": self.subnet_base, "n": self.n,
                 "bridge": self.bridge, "hosts": [asdict(h) for h in self.hosts],
                 "sshd_pids": self.sshd_pids, "timings": self.timings}
        self.state_path.write_text(json.dumps(state, indent=2) + "\n")

    def _load_state(self) -> None:
        state = json.loads(self.state_path.read_text())
        self.prefix = state["prefix"]
        self.subnet_base = state["subnet_base"]
        self.n = state["n"]
        self.bridge = state["bridge"]
        self.hosts = [LabHost(**h) for h in state["hosts"]]
        self.sshd_pids = {k: int(v) for k, v in state.get("sshd_pids", {}).items()}
        self.timings = state.get("timings", {})

    def is_up(self) -> bool:
        """True when every namespace exists and every sshd is alive."""
        from workbench.processes import pid_alive

        names = netns_list()
        return bool(self.sshd_pids) and all(
            h.netns in names and pid_alive(self.sshd_pids.get(h.name, -1)) for h in self.hosts)

    # -- up --------------------------------------------------------------------------------
    def up(self) -> Lab:
        """Build the lab (raises :class:`LabError`; a half-built lab is removed)."""
        if self.state_path.exists() and self.is_up():
            return self
        t0 = time.monotonic()
        self._check_free()
        self.dir.mkdir(parents=True, exist_ok=True)
        self._save_state()  # so down() can clean a half-built lab
        try:
            self._keys()
            self._network()
            for h in self.hosts:
                self._start_sshd(h)
                self._save_state()
            self._wait_and_scan()
            self._write_inventory()
        except BaseException:
            with contextlib.suppress(Exception):
                self.down()
            raise
        self.timings["up_s"] = round(time.monotonic() - t0, 3)
        self._save_state()
        return self

    def _check_free(self) -> None:
        taken = netns_list() & {h.netns for h in self.hosts}
        if taken:
            raise LabError(f"namespaces {sorted(taken)} already exist",
                           hint="another lab uses this prefix: `nimo lab down` it or use --prefix")
        if Path(f"/sys/class/net/{self.bridge}").exists():
            raise LabError(f"bridge {self.bridge} already exists",
                           hint="another lab uses this prefix: use --prefix/--subnet-base")

    def _keys(self) -> None:
        if not self.key_file.exists():
            sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{self.prefix}lab",
                "-f", str(self.key_file)])
        (self.dir / "authorized_keys").write_text(Path(f"{self.key_file}.pub").read_text())
        for h in self.hosts:
            hdir = self.dir / "hosts" / h.name
            hdir.mkdir(parents=True, exist_ok=True)
            key = hdir / "ssh_host_ed25519_key"
            if not key.exists():
                sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", h.netns, "-f", str(key)])
        self.export_dir.mkdir(exist_ok=True)

    def _network(self) -> None:
        base, br = self.subnet_base, self.bridge
        sh(["ip", "link", "add", br, "type", "bridge"])
        sh(["ip", "addr", "add", f"{base}.0.1/24", "dev", br])
        sh(["ip", "link", "set", br, "up"])
        storage = self.hosts[0]
        for i, h in enumerate(self.hosts, start=1):
            ns = h.netns
            sh(["ip", "netns", "add", ns])
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(self._hosts_file(h))
            (etc / "resolv.conf").write_text("options timeout:1 attempts:1\n")
            nsx = ["ip", "netns", "exec", ns]
            sh([*nsx, "ip", "link", "set", "lo", "up"])
            veth = f"{self.prefix}m{i}"
            sh(["ip", "link", "add", veth, "type", "veth", "peer", "name", f"{veth}x"])
            sh(["ip", "link", "set", f"{veth}x", "netns", ns, "name", "eth0"])
            sh(["ip", "link", "set", veth, "master", br, "up"])
            sh([*nsx, "ip", "addr", "add", f"{h.address}/24", "dev", "eth0"])
            sh([*nsx, "ip", "link", "set", "eth0", "up"])
            if h.role == "compute":
                k = i - 1
                a, b = f"{self.prefix}d{k}a", f"{self.prefix}d{k}b"
                sh(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
                sh(["ip", "link", "set", a, "netns", ns, "name", "data0"])
                sh(["ip", "link", "set", b, "netns", storage.netns, "name", f"data{k - 1}"])
                sh([*nsx, "ip", "addr", "add", h.data_address, "peer",
                    f"{storage.data_address}/32", "dev", "data0"])
                sh([*nsx, "ip", "link", "set", "data0", "up"])
                snx = ["ip", "netns", "exec", storage.netns]
                sh([*snx, "ip", "addr", "add", storage.data_address, "peer",
                    f"{h.data_address}/32", "dev", f"data{k - 1}"])
                sh([*snx, "ip", "link", "set", f"data{k - 1}", "up"])

    def _hosts_file(self, me: LabHost) -> str:
        lines = ["127.0.0.1\tlocalhost", f"127.0.1.1\t{me.hostname}"]
        lines += [f"{h.address}\t{h.name} {h.hostname}" for h in self.hosts if h is not me]
        return "\n".join(lines) + "\n"

    def _sshd_config(self, h: LabHost) -> Path:
        hdir = self.dir / "hosts" / h.name
        path_env = os.pathsep.join(dict.fromkeys([
            str(Path(sys.executable).parent), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
            "/usr/bin", "/sbin", "/bin"]))
        cfg = hdir / "sshd_config"
        cfg.write_text("\n".join([
            f"# {self.prefix}lab host {h.name}",
            "Port 22",
            f"ListenAddress {h.address}",
            f"ListenAddress {h.data_address}",
            f"HostKey {hdir / 'ssh_host_ed25519_key'}",
            f"PidFile {hdir / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "UseDNS no",
            "Subsystem sftp internal-sftp",
            "MaxStartups 50:30:100",
            "MaxSessions 50",
            # SHLVL=1: bash skips ~/.bashrc for sshd-run commands (it cost ~90 ms per command)
            f"SetEnv PATH={path_env} SHLVL=1",
            "",
        ]))
        return cfg

    def _start_sshd(self, h: LabHost) -> None:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        cfg = self._sshd_config(h)
        hdir = self.dir / "hosts" / h.name
        pidfile = hdir / "sshd.pid"
        with contextlib.suppress(FileNotFoundError):
            pidfile.unlink()
        remount = []
        for fstype, mp, opts in cgroup_mounts():
            # `ip netns exec` mounts a fresh /sys that hides the cgroup hierarchies: re-mount
            remount.append(f"mkdir -p {shlex.quote(mp)} && mount -t {fstype} -o "
                           f"{shlex.quote(opts)} {fstype} {shlex.quote(mp)}")
        script = "set -e; hostname \"$1\"; " + "; ".join(remount) + '; exec "$2" -f "$3" -E "$4"'
        sh(["ip", "netns", "exec", h.netns, "unshare", "--uts", "sh", "-c", script,
            f"{self.prefix}sshd", h.hostname, shutil.which("sshd") or "/usr/sbin/sshd",
            str(cfg), str(hdir / "sshd.log")])
        deadline = time.monotonic() + 5
        while not pidfile.exists() or not pidfile.read_text().strip():
            if time.monotonic() > deadline:
                log = (hdir / "sshd.log").read_text() if (hdir / "sshd.log").exists() else ""
                raise LabError(f"sshd of {h.name} did not start: {log.strip()[-300:]}")
            time.sleep(0.01)
        self.sshd_pids[h.name] = int(pidfile.read_text().strip())

    def _wait_and_scan(self) -> None:
        for h in self.hosts:
            deadline = time.monotonic() + 5
            while True:
                try:
                    with socket.create_connection((h.address, h.port), timeout=0.5):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise LabError(f"sshd of {h.name} not reachable at {h.address}") from None
                    time.sleep(0.02)
        out = sh(["ssh-keyscan", "-T", "3", "-t", "ed25519", *[h.address for h in self.hosts]])
        lines = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
        if len(lines) != len(self.hosts):
            raise LabError(f"ssh-keyscan found {len(lines)} of {len(self.hosts)} host keys")
        # data-path addresses (only reachable from inside the lab) carry the same host keys
        for h in self.hosts:
            pub = (self.dir / "hosts" / h.name / "ssh_host_ed25519_key.pub").read_text().split()
            lines.append(f"{h.data_address} {pub[0]} {pub[1]}")
        self.known_hosts.write_text("\n".join(lines) + "\n")

    def _write_inventory(self) -> None:
        doc: dict[str, Any] = {}
        if EXAMPLE_INVENTORY.exists():
            doc = yaml.safe_load(EXAMPLE_INVENTORY.read_text()) or {}
        doc["version"] = 1
        doc["name"] = f"{self.prefix}lab"
        doc["hosts"] = []
        for h in self.hosts:
            entry = {"name": h.name, "address": h.address, "port": h.port, "user": h.user,
                     "key_file": str(self.key_file), "known_hosts": str(self.known_hosts),
                     "role": h.role, "data_iface": h.data_iface, "data_address": h.data_address}
            if h.peer:
                entry["peer"] = h.peer
            doc["hosts"].append(entry)
        storage = dict(doc.get("storage") or {})
        storage["export"] = str(self.export_dir)
        doc["storage"] = storage
        text = f"# written by `nimo lab up` ({self.prefix}lab); removed by `nimo lab down`\n"
        self.inventory_path.write_text(text + yaml.safe_dump(doc, sort_keys=False))

    # -- down ------------------------------------------------------------------------------
    def down(self) -> dict[str, Any]:
        """Remove everything the lab created; idempotent. Returns what was removed."""
        t0 = time.monotonic()
        removed: dict[str, Any] = {"pids": [], "netns": [], "cgroups": [], "dirs": []}
        if not self.state_path.exists():  # never guess: another lab may use these names
            removed["down_s"] = 0.0
            return removed
        existing = netns_list()
        for h in self.hosts:
            if h.netns in existing:
                removed["pids"] += terminate(netns_pids(h.netns))
        for h in self.hosts:
            removed["cgroups"] += _remove_scoped_cgroups(h.hostname)
            removed["dirs"] += _remove_scoped_tmp(h.hostname)
            if h.netns in existing:
                sh(["ip", "netns", "del", h.netns], check=False)
                removed["netns"].append(h.netns)
            shutil.rmtree(Path("/etc/netns") / h.netns, ignore_errors=True)
        if Path(f"/sys/class/net/{self.bridge}").exists():
            sh(["ip", "link", "del", self.bridge], check=False)
            removed["bridge"] = self.bridge
        for i in range(1, len(self.hosts) + 1):  # veths die with their namespace; be sure
            if Path(f"/sys/class/net/{self.prefix}m{i}").exists():
                sh(["ip", "link", "del", f"{self.prefix}m{i}"], check=False)
        for name in ("inventory.yaml", "known_hosts", "authorized_keys", "id_ed25519",
                     "id_ed25519.pub", "lab.json"):
            with contextlib.suppress(FileNotFoundError):
                (self.dir / name).unlink()
        shutil.rmtree(self.dir / "hosts", ignore_errors=True)
        shutil.rmtree(self.export_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.dir.rmdir()
        self.sshd_pids = {}
        self.timings["down_s"] = round(time.monotonic() - t0, 3)
        removed["down_s"] = self.timings["down_s"]
        return removed


def _remove_scoped_cgroups(token: str) -> list[str]:
    """rmdir cgroups named ``nimo-*.<token>`` left by runs on a lab host (members are dead)."""
    out = []
    root = Path("/sys/fs/cgroup")
    if not root.is_dir():
        return out
    for d in root.rglob(f"nimo-*.{token}"):
        if d.is_dir():
            for _ in range(50):
                try:
                    d.rmdir()
                    out.append(str(d))
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
    return out


def _remove_scoped_tmp(token: str) -> list[str]:
    out = []
    for d in Path("/tmp").glob(f"nimo-*.{token}"):
        shutil.rmtree(d, ignore_errors=True)
        out.append(str(d))
    return out
