"""A multi-host lab on one Linux machine: one network namespace + sshd per host.

``Lab.up()`` builds the hosts and network of :mod:`workbench.lab.network` and an sshd per host
(:mod:`workbench.lab.sshd`), then writes ``DIR/inventory.yaml``. State goes to DIR/lab.json;
``Lab.down()`` removes everything it lists (idempotent).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from nimo.config import to_dict, valid_hint
from workbench.errors import LabError
from workbench.lab import slurm as lab_slurm
from workbench.lab.netns import (
    netns_list,
    netns_pids,
    remove_scoped,
    sh,
    terminate,
)
from workbench.lab.network import (
    LabHost,
    bridge_cmds,
    data_link_cmds,
    hosts_file,
    management_cmds,
    plan_hosts,
)
from workbench.lab.sshd import known_hosts_lines, private_dir, start_sshd, write_private
from workbench.processes import pid_alive
from workbench.remote.connection import Connection
from workbench.shipped import example_inventory
from workbench.yamlfile import read_yaml

DEFAULT_PREFIX = os.environ.get("NIMO_LAB_PREFIX", "nimo-")
DEFAULT_SUBNET = os.environ.get("NIMO_LAB_SUBNET", "10.77")
DEFAULT_DIR = ".lab"
EXAMPLE_INVENTORY = example_inventory()  # the installed copy or the source tree's
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,6}-$")
_BASE_RE = re.compile(r"^10\.(\d{1,3})$")


class Lab:
    """Build (``up``) and remove (``down``) a namespace lab; also a context manager.

    Attributes for tests: ``dir``, ``inventory_path``, ``hosts`` (list of :class:`LabHost`),
    ``known_hosts``, ``key_file``, ``export_dir`` (the directory the storage host exports:
    the lab hosts share this machine's files).
    """

    def __init__(self, dir: str | Path = DEFAULT_DIR, *, hosts: int = 3,
                 prefix: str = DEFAULT_PREFIX, subnet_base: str = DEFAULT_SUBNET,
                 slurm: bool = False) -> None:
        if not _PREFIX_RE.fullmatch(prefix):
            raise LabError(f"invalid prefix {prefix!r}", hint="2-8 chars like 'nimo-' or 'lb2-'")
        m = _BASE_RE.fullmatch(subnet_base)
        if not m or int(m.group(1)) > 255:
            raise LabError(f"invalid subnet base {subnet_base!r}", hint="like 10.77")
        self.dir = Path(dir).resolve()
        self.state_path = self.dir / "lab.json"
        self.inventory_path = self.dir / "inventory.yaml"
        self.known_hosts = self.dir / "known_hosts"
        self.key_file = self.dir / "id_ed25519"
        self.authorized_keys = self.dir / "authorized_keys"
        self.export_dir = self.dir / "export"
        self.prefix = prefix
        self.subnet_base = subnet_base
        self.n = hosts
        self.slurm = slurm  # a Slurm cluster on the hosts (workbench.lab.slurm)
        self.hosts: list[LabHost] = plan_hosts(hosts, prefix, subnet_base)
        self.bridge = f"{prefix}br0"
        self.sshd_pids: dict[str, int] = {}
        self.timings: dict[str, float] = {}
        if self.state_path.exists():
            self._load_state()

    def host(self, name: str) -> LabHost:
        """The lab host called ``name`` (LabError listing the valid names if none)."""
        for h in self.hosts:
            if h.name == name:
                return h
        raise LabError(f"no lab host {name!r}", hint=valid_hint([h.name for h in self.hosts]))

    def connect(self, name: str, **kwargs: Any) -> Connection:
        """A (lazy) connection to a lab host with the lab's key and known_hosts."""
        h = self.host(name)
        return Connection(h.address, name=h.name, port=h.port, user=h.user,
                          key_file=self.key_file, known_hosts=self.known_hosts, **kwargs)

    def sshd_pid(self, name: str) -> int:
        """The PID of host ``name``'s sshd (tests kill it to cut connections)."""
        return self.sshd_pids[name]

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- state -----------------------------------------------------------------------------
    def _save_state(self) -> None:
        state = {"prefix": self.prefix, "subnet_base": self.subnet_base, "n": self.n,
                 "bridge": self.bridge, "slurm": self.slurm,
                 "hosts": [asdict(h) for h in self.hosts],
                 "sshd_pids": self.sshd_pids, "timings": self.timings}
        self.state_path.write_text(json.dumps(state, indent=2) + "\n")

    def _load_state(self) -> None:
        state = json.loads(self.state_path.read_text())
        self.prefix = state["prefix"]
        self.subnet_base = state["subnet_base"]
        self.n = state["n"]
        self.bridge = state["bridge"]
        self.slurm = bool(state.get("slurm", False))
        self.hosts = [LabHost(**h) for h in state["hosts"]]
        self.sshd_pids = {k: int(v) for k, v in state.get("sshd_pids", {}).items()}
        self.timings = state.get("timings", {})

    def is_up(self) -> bool:
        """True when every namespace exists and every sshd is alive."""
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
        private_dir(self.dir)  # keys, known_hosts: readable by their owner only
        self._save_state()  # so down() can clean a half-built lab
        try:
            self._keys()
            self._network()
            for h in self.hosts:
                self.sshd_pids[h.name] = start_sshd(h, self._host_dir(h), self.authorized_keys,
                                                    self.prefix)
                self._save_state()
            lines = known_hosts_lines(self.hosts, self.dir / "hosts")
            write_private(self.known_hosts, "\n".join(lines) + "\n")
            if self.slurm:
                t_slurm = time.monotonic()
                lab_slurm.start_cluster(self.dir, self.prefix, self.hosts)
                self.timings["slurm_up_s"] = round(time.monotonic() - t_slurm, 3)
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

    def _host_dir(self, h: LabHost) -> Path:
        return self.dir / "hosts" / h.name

    def _keys(self) -> None:
        _keygen(self.key_file, f"{self.prefix}lab")
        write_private(self.authorized_keys, Path(f"{self.key_file}.pub").read_text())
        for h in self.hosts:
            private_dir(self._host_dir(h))
            _keygen(self._host_dir(h) / "ssh_host_ed25519_key", h.netns)
        self.export_dir.mkdir(exist_ok=True)

    def _network(self) -> None:
        _run_all(bridge_cmds(self.bridge, self.subnet_base))
        storage = self.hosts[0]
        for i, h in enumerate(self.hosts, start=1):
            sh(["ip", "netns", "add", h.netns])
            etc = Path("/etc/netns") / h.netns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(hosts_file(h, self.hosts))
            (etc / "resolv.conf").write_text("options timeout:1 attempts:1\n")
            _run_all(management_cmds(h, f"{self.prefix}m{i}", self.bridge))
            if h.role == "compute":
                _run_all(data_link_cmds(h, storage, i - 1, self.prefix))

    def _write_inventory(self) -> None:
        """``DIR/inventory.yaml``: the lab's hosts plus the experiment blocks of the example."""
        doc: dict[str, Any] = {}
        if EXAMPLE_INVENTORY.exists():
            doc = read_yaml(EXAMPLE_INVENTORY, "inventory", malformed=LabError,
                            unreadable=LabError) or {}
        doc["version"] = 1
        doc["name"] = f"{self.prefix}lab"
        doc["hosts"] = [
            {k: v for k, v in to_dict(h.inventory_host(self.key_file, self.known_hosts)).items()
             if v is not None} for h in self.hosts]
        doc["storage"] = {**(doc.get("storage") or {}), "export": str(self.export_dir)}
        if self.slurm:
            doc = lab_slurm.slurm_inventory(doc, self.dir, self.hosts)
        text = f"# written by `nimo lab up` ({self.prefix}lab); removed by `nimo lab down`\n"
        self.inventory_path.write_text(text + yaml.safe_dump(doc, sort_keys=False))

    # -- down ------------------------------------------------------------------------------
    def down(self) -> dict[str, Any]:
        """Remove everything the lab created; idempotent. Returns what was removed."""
        t0 = time.monotonic()
        removed: dict[str, Any] = {"pids": [], "netns": [], "cgroups": [], "dirs": [],
                                   "markers": []}
        if not self.state_path.exists():  # never guess: another lab may use these names
            removed["down_s"] = 0.0
            return removed
        self._remove_hosts(removed)
        removed["pids"] += lab_slurm.stop_cluster(self.dir)
        if Path(f"/sys/class/net/{self.bridge}").exists():
            sh(["ip", "link", "del", self.bridge], check=False)
            removed["bridge"] = self.bridge
        for i in range(1, len(self.hosts) + 1):  # veths die with their namespace; be sure
            if Path(f"/sys/class/net/{self.prefix}m{i}").exists():
                sh(["ip", "link", "del", f"{self.prefix}m{i}"], check=False)
        self._remove_files()
        self.sshd_pids = {}
        self.timings["down_s"] = round(time.monotonic() - t0, 3)
        removed["down_s"] = self.timings["down_s"]
        return removed

    def _remove_hosts(self, removed: dict[str, Any]) -> None:
        """Stop every process in the lab's namespaces, then remove what runs left and the
        namespaces themselves (adds to ``removed``)."""
        existing = netns_list()
        for h in self.hosts:
            if h.netns in existing:
                removed["pids"] += terminate(netns_pids(h.netns))
        for h in self.hosts:
            for kind, gone in remove_scoped(h.hostname, h.user).items():
                removed[kind] += gone
            removed["cgroups"] += lab_slurm.remove_job_cgroups(h.hostname)
            if h.netns in existing:
                sh(["ip", "netns", "del", h.netns], check=False)
                removed["netns"].append(h.netns)
            shutil.rmtree(Path("/etc/netns") / h.netns, ignore_errors=True)

    def _remove_files(self) -> None:
        for path in (self.inventory_path, self.known_hosts, self.authorized_keys, self.key_file,
                     Path(f"{self.key_file}.pub"), self.state_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        shutil.rmtree(self.dir / "hosts", ignore_errors=True)
        shutil.rmtree(self.export_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.dir.rmdir()


def _keygen(path: Path, comment: str) -> None:
    """An ed25519 key pair at ``path`` unless one is there."""
    if not path.exists():
        sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])


def _run_all(cmds: list[list[str]]) -> None:
    for argv in cmds:
        sh(argv)
