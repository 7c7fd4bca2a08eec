"""The lab's hosts and network as data: which hosts, and the ``ip`` commands that wire them.

Topology (``base`` = subnet base, default ``10.77``)::

    root ns: bridge <prefix>br0 = base.0.1/24 --veth-- each host's eth0 = base.0.(10+i)
    data path: storage has one address base.1.1 on every link (point-to-point /32 routes);
               compute k: data0 = base.1.(10+k) <--veth--> storage data<k-1>

No default route anywhere: traffic cannot leave the lab.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.errors import LabError
from workbench.inventory import Host

MAX_HOSTS = 20


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

    def inventory_host(self, key_file: Path, known_hosts: Path) -> Host:
        """This host as an inventory ``hosts`` entry reached with the lab's key."""
        return Host(name=self.name, address=self.address, role=self.role,
                    data_iface=self.data_iface, data_address=self.data_address, port=self.port,
                    user=self.user, key_file=str(key_file), known_hosts=str(known_hosts),
                    peer=self.peer)


def plan_hosts(n: int, prefix: str, base: str) -> list[LabHost]:
    """Pure: the hosts of an ``n``-host lab (1 storage, ``n-1`` compute)."""
    if n < 2:
        raise LabError(f"a lab needs at least 2 hosts (1 storage + 1 compute), got {n}")
    if n > MAX_HOSTS:
        raise LabError(f"at most {MAX_HOSTS} hosts, got {n}")
    hosts = [LabHost("storage1", "storage", f"{prefix}storage1", f"{base}.0.11", "data0",
                     f"{base}.1.1")]
    for k in range(1, n):
        hosts.append(LabHost(f"compute{k}", "compute", f"{prefix}compute{k}",
                             f"{base}.0.{11 + k}", "data0", f"{base}.1.{10 + k}", "storage1"))
    return hosts


def bridge_cmds(bridge: str, base: str) -> list[list[str]]:
    """The management bridge in the root namespace."""
    return [["ip", "link", "add", bridge, "type", "bridge"],
            ["ip", "addr", "add", f"{base}.0.1/24", "dev", bridge],
            ["ip", "link", "set", bridge, "up"]]


def management_cmds(h: LabHost, veth: str, bridge: str) -> list[list[str]]:
    """Host ``h``'s loopback and its ``eth0`` on the bridge (after ``ip netns add``)."""
    return [[*_in(h.netns), "ip", "link", "set", "lo", "up"],
            ["ip", "link", "add", veth, "type", "veth", "peer", "name", f"{veth}x"],
            ["ip", "link", "set", f"{veth}x", "netns", h.netns, "name", "eth0"],
            ["ip", "link", "set", veth, "master", bridge, "up"],
            *_address_cmds(h.netns, "eth0", [f"{h.address}/24"])]


def data_link_cmds(compute: LabHost, storage: LabHost, k: int, prefix: str) -> list[list[str]]:
    """The veth pair between compute host ``k`` and the storage host's ``data<k-1>``."""
    near, far = f"{prefix}d{k}a", f"{prefix}d{k}b"
    storage_iface = f"data{k - 1}"
    return [["ip", "link", "add", near, "type", "veth", "peer", "name", far],
            ["ip", "link", "set", near, "netns", compute.netns, "name", compute.data_iface],
            ["ip", "link", "set", far, "netns", storage.netns, "name", storage_iface],
            *_address_cmds(compute.netns, compute.data_iface,
                           [compute.data_address, "peer", f"{storage.data_address}/32"]),
            *_address_cmds(storage.netns, storage_iface,
                           [storage.data_address, "peer", f"{compute.data_address}/32"])]


def hosts_file(me: LabHost, hosts: list[LabHost]) -> str:
    """``/etc/hosts`` inside ``me``'s namespace: every other lab host by name."""
    lines = ["127.0.0.1\tlocalhost", f"127.0.1.1\t{me.hostname}"]
    lines += [f"{h.address}\t{h.name} {h.hostname}" for h in hosts if h is not me]
    return "\n".join(lines) + "\n"


def _in(netns: str) -> list[str]:
    return ["ip", "netns", "exec", netns]


def _address_cmds(netns: str, dev: str, address: list[str]) -> list[list[str]]:
    return [[*_in(netns), "ip", "addr", "add", *address, "dev", dev],
            [*_in(netns), "ip", "link", "set", dev, "up"]]
