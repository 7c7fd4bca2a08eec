"""The namespace lab: N hosts on this machine, each a network namespace with its own sshd.

Public API (stable)::

    Lab(dir=".lab", *, hosts=3, prefix="nimo-", subnet_base="10.77")  # env NIMO_LAB_PREFIX/SUBNET
    lab.up() -> Lab ; lab.down() -> dict ; with Lab(...) as lab: ...
    lab.dir, lab.inventory_path, lab.known_hosts, lab.key_file, lab.export_dir
    lab.hosts -> list[LabHost(name, role, netns, address, data_iface, data_address, peer, ...)]
    lab.host(name), lab.connect(name, **kw) -> Connection, lab.sshd_pid(name), lab.is_up()
"""

from workbench.lab.builder import DEFAULT_DIR, DEFAULT_PREFIX, DEFAULT_SUBNET, Lab, LabHost
from workbench.lab.netns import LabError

__all__ = ["DEFAULT_DIR", "DEFAULT_PREFIX", "DEFAULT_SUBNET", "Lab", "LabError", "LabHost"]
