"""The validated inventory: hosts, the application G and its dataset, storage, monitors,
policies. Each section is declared once with ``nimo.config.option``: its keys, kinds and
defaults are the YAML format (``docs/inventory.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nimo.config import (
    AbsPath,
    Argv,
    Boolean,
    Choice,
    Integer,
    Nested,
    Number,
    Text,
    option,
    section,
    valid_hint,
)
from nimo.space import ResourceSpace
from workbench.errors import InventoryError
from workbench.inventory.argv import PLACEHOLDERS
from workbench.inventory.knobs import Knob
from workbench.inventory.values import (
    ADDRESS,
    INTERFACE,
    NAME,
    DatasetPath,
    IpAddress,
    LocalFile,
)

ROLES = ("compute", "storage")
STORAGE_METHODS = ("auto", "sshfs", "nfs")
ON_FAILURE = ("continue", "stop")
EXECUTORS = ("ssh", "slurm")
TOP_KEYS = ("version", "name", "hosts", "hosts_from", "storage", "knobs", "assignments",
            "application", "monitors", "policies", "executor", "slurm")


@section
class Host:
    """One SSH-reachable host; ``data_iface``/``data_address`` are its end of the data path.

    On a compute host, ``peer`` names its storage host and ``peer_iface`` the storage host's
    interface facing it (default: found with ``ip route get`` on the storage host).
    ``shareable``: campaigns may use the host at the same time (default: a campaign leases
    it alone, ``nimo campaign run|resume`` and ``nimo serve`` alike). ``hung_after_s``: a
    command on the host fails as hung once this long passes without an answer to its SSH
    keepalives (three, one every third of it; OpenSSH's ServerAlive).
    """

    name: str = option(Text(NAME, "valid: letters, digits, _ . - (max 63)"))
    address: str = option(ADDRESS)
    role: str = option(Choice(ROLES))
    data_iface: str = option(INTERFACE)
    data_address: str = option(IpAddress())
    port: int = option(Integer(1, 65535), default=22)
    user: str = option(Text(NAME, "valid: a user name"), default="root")
    key_file: str | None = option(LocalFile(), default=None)
    known_hosts: str | None = option(LocalFile(), default=None)
    peer: str | None = option(Text(), default=None)
    peer_iface: str | None = option(INTERFACE, default=None)
    shareable: bool = option(Boolean(), default=False)
    hung_after_s: float = option(Number(3.0, 86400.0), default=45.0)


@section
class Dataset:
    """The input dataset on the storage host, relative to ``storage.export``."""

    path: str = option(DatasetPath())
    size_mb: float | None = option(Number(0, lo_open=True), default=None)
    generate: tuple[str, ...] | None = option(Argv(PLACEHOLDERS), default=None)


@section
class Application:
    """G: an argv template plus its dataset, working directory, timeout and repeats."""

    name: str = option(Text(NAME, "valid: letters, digits, _ . -"))
    command: tuple[str, ...] = option(Argv(PLACEHOLDERS))
    dataset: Dataset = option(Nested(Dataset))
    # parent of each run's private work dir (mktemp -d); another directory must be one only
    # root or the SSH user can change (checked on the host, symlinks not followed)
    workdir: str = option(AbsPath(), default="/tmp")
    timeout_s: float = option(Number(0, lo_open=True), default=300.0)
    repeats: int = option(Integer(1, 100), default=1)
    threads: int = option(Integer(1, 1024), default=1)


@section
class Storage:
    """How the storage host's ``export`` directory reaches the compute host's ``mountpoint``.

    ``identity_file``/``known_hosts`` are paths ON THE COMPUTE HOST that sshfs uses to reach
    the storage host (default: the storage host's ``key_file``/``known_hosts``, right when the
    hosts share a file system as in the namespace lab).
    """

    method: str = option(Choice(STORAGE_METHODS), default="sshfs")
    export: str = option(AbsPath(), default="/srv/nimo")
    mountpoint: str | None = option(AbsPath(), default=None)
    identity_file: str | None = option(AbsPath(), default=None)
    known_hosts: str | None = option(AbsPath(), default=None)


@section
class Monitors:
    """What is recorded during each run: sadc, a packet trace, the resource profile."""

    sar: bool = option(Boolean(), default=True)
    sar_interval_s: int = option(Integer(1, 3600), default=1)
    tshark: bool = option(Boolean(), default=True)
    profile: bool = option(Boolean(), default=True)


@section
class Policies:
    """What a failed run does to the campaign: continue or stop, and how often to retry."""

    on_failure: str = option(Choice(ON_FAILURE), default="continue")
    max_failures: int | None = option(Integer(0), default=None)
    retries: int = option(Integer(0, 10), default=1)


@section
class Slurm:
    """``executor: slurm``: where the cluster's commands find it and how runs become jobs.

    ``conf`` is the slurm.conf the commands use (``SLURM_CONF``; default: the system's);
    ``work_dir`` a directory on storage every node and this machine share (job scripts,
    outputs, the shipped apps; default ``<storage.export>/.nimo-slurm``); ``mem_mb`` the
    memory asked per node (``--mem``) unless a ``memory_mb`` knob sets it.
    """

    conf: str | None = option(AbsPath(), default=None)
    partition: str | None = option(Text(NAME, "valid: a partition name"), default=None)
    constraint: str | None = option(Text(), default=None)
    work_dir: str | None = option(AbsPath(), default=None)
    max_jobs: int = option(Integer(1, 1000), default=4)
    mem_mb: int | None = option(Integer(1), default=None)
    poll_s: float = option(Number(0.05, 60.0), default=0.25)
    pending_limit_s: float = option(Number(1.0), default=600.0)


@dataclass(frozen=True)
class Inventory:
    """A validated inventory file."""

    path: str
    name: str
    hosts: tuple[Host, ...]
    knobs: tuple[Knob, ...]
    application: Application
    storage: Storage = field(default_factory=Storage)
    monitors: Monitors = field(default_factory=Monitors)
    policies: Policies = field(default_factory=Policies)
    assignments: tuple[tuple[float, ...], ...] = ()
    executor: str = "ssh"
    slurm: Slurm = field(default_factory=Slurm)

    def host(self, name: str) -> Host:
        """The host called ``name`` (InventoryError listing the valid names if none)."""
        for h in self.hosts:
            if h.name == name:
                return h
        raise InventoryError(f"{self.path}: no host {name!r}", hint=valid_hint(self.host_names))

    @property
    def host_names(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.hosts)

    @property
    def compute_hosts(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.role == "compute")

    def storage_for(self, compute: Host) -> Host:
        """The storage host wired to ``compute`` (its ``peer``)."""
        assert compute.peer is not None
        return self.host(compute.peer)

    def argv_values(self, assignment: Mapping[str, float]) -> dict[str, object]:
        """A run's assignment as argv placeholders: a categorical knob's level as its name."""
        knobs = {k.name: k for k in self.knobs}
        return {n: knobs[n].argv_value(v) if n in knobs else v for n, v in assignment.items()}

    def space(self) -> ResourceSpace:
        """The resource space: one attribute per knob; candidates = assignments or the grid."""
        return ResourceSpace(tuple(k.attribute() for k in self.knobs), self.assignments)
