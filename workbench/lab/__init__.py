"""The namespace lab: N hosts on this machine, each a network namespace with its own sshd.

Public API (stable)::

    Lab(dir=".lab", *, hosts=3, prefix="nimo-", subnet_base="10.77")  # env NIMO_LAB_PREFIX/SUBNET
    lab.up() -> Lab ; lab.down() -> dict ; with Lab(...) as lab: ...
    lab.dir, lab.inventory_path, lab.known_hosts, lab.key_file, lab.export_dir
    lab.hosts -> list[LabHost(name, role, netns, address, data_iface, data_address, peer, ...)]
    lab.host(name), lab.connect(name, **kw) -> Connection, lab.sshd_pid(name), lab.is_up()

Measured on a 2-core VM (kernel 6.18): ``up`` of 3 hosts 0.55-0.85 s idle (up to 1.5 s when
the machine is loaded), ``down`` 0.15-0.3 s; SSH connect 20-65 ms, a command 2-3 ms idle
(10-40 ms under load). The lab's sshd sets ``SHLVL=1`` so bash skips ~/.bashrc (pyenv init
there cost ~90 ms per command) and puts this Python's bin directory first on PATH (the NFQUEUE
delayer needs NetfilterQueue). Faults worth knowing: plain ``ping`` timestamps replies in the
kernel before netfilter, so it cannot see delay added on its own host's ingress: use
``ping -U``.
"""

from workbench.errors import LabError
from workbench.lab.builder import DEFAULT_DIR, DEFAULT_PREFIX, DEFAULT_SUBNET, Lab, LabHost

__all__ = ["DEFAULT_DIR", "DEFAULT_PREFIX", "DEFAULT_SUBNET", "Lab", "LabError", "LabHost"]
