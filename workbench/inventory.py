"""Inventory YAML: the workbench's hosts, the knobs to explore, the application and policies.

``load_inventory(path) -> Inventory`` validates everything on load; every error is ONE line
naming the file, the key path (``hosts[1].role``) and what would be valid. The format is
documented in ``docs/inventory.md`` and an example lives in ``inventories/example.yaml``.
"""

from __future__ import annotations

import ipaddress
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nimo.space import Attribute, ResourceSpace
from workbench.errors import InventoryError

ROLES = ("compute", "storage")
STORAGE_METHODS = ("auto", "sshfs", "nfs")
ON_FAILURE = ("continue", "stop")
# Placeholders every application command may use; knob names are added per inventory.
PLACEHOLDERS = ("dataset", "workdir", "threads", "app_dir", "size_mb", "run")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_IFACE = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")


@dataclass(frozen=True)
class KnobKind:
    """What a knob kind controls: its attribute's direction, resource, unit and valid range."""

    name: str
    direction: int
    resource: str
    unit: str
    lo: float
    hi: float
    lo_open: bool = False


# Registry of knob kinds (extend here; the executor maps each kind to a mechanism).
KNOB_KINDS: dict[str, KnobKind] = {
    k.name: k
    for k in (
        KnobKind("cpu_share", +1, "compute", "cpu", 0.0, 64.0, lo_open=True),
        KnobKind("memory_mb", +1, "compute", "MB", 16.0, 1 << 22),
        KnobKind("delay_ms", -1, "network", "ms", 0.0, 10_000.0),
        KnobKind("rate_mbit", +1, "network", "Mbit/s", 0.0, 100_000.0, lo_open=True),
    )
}


@dataclass(frozen=True)
class Host:
    """One SSH-reachable host; ``data_iface``/``data_address`` are its end of the data path.

    On a compute host, ``peer`` names its storage host and ``peer_iface`` the storage host's
    interface facing it (default: found with ``ip route get`` on the storage host).
    """

    name: str
    address: str
    role: str
    data_iface: str
    data_address: str
    port: int = 22
    user: str = "root"
    key_file: str | None = None
    known_hosts: str | None = None
    peer: str | None = None
    peer_iface: str | None = None


@dataclass(frozen=True)
class Knob:
    """A resource knob with the levels to explore."""

    name: str
    kind: str
    levels: tuple[float, ...]
    unit: str

    def attribute(self) -> Attribute:
        k = KNOB_KINDS[self.kind]
        return Attribute(self.name, self.levels, k.direction, k.resource, self.unit)


@dataclass(frozen=True)
class Dataset:
    """The input dataset on the storage host, relative to ``storage.export``."""

    path: str
    size_mb: float | None = None
    generate: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Application:
    """G: an argv template plus its dataset, working directory, timeout and repeats."""

    name: str
    command: tuple[str, ...]
    dataset: Dataset
    workdir: str = "/tmp/nimo-work"
    timeout_s: float = 300.0
    repeats: int = 1
    threads: int = 1


@dataclass(frozen=True)
class Storage:
    """How the storage host's ``export`` directory reaches the compute host's ``mountpoint``.

    ``identity_file``/``known_hosts`` are paths ON THE COMPUTE HOST that sshfs uses to reach
    the storage host (default: the storage host's ``key_file``/``known_hosts``, right when the
    hosts share a file system as in the namespace lab).
    """

    method: str = "sshfs"
    export: str = "/srv/nimo"
    mountpoint: str | None = None
    identity_file: str | None = None
    known_hosts: str | None = None


@dataclass(frozen=True)
class Monitors:
    sar: bool = True
    sar_interval_s: int = 1
    tshark: bool = True
    profile: bool = True


@dataclass(frozen=True)
class Policies:
    on_failure: str = "continue"
    max_failures: int | None = None
    retries: int = 1


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

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise InventoryError(f"{self.path}: no host {name!r}", hint=_valid(self.host_names))

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

    def space(self) -> ResourceSpace:
        """The resource space: one attribute per knob; candidates = assignments or the grid."""
        return ResourceSpace(tuple(k.attribute() for k in self.knobs), self.assignments)


# --------------------------------------------------------------------------------- loading
def _valid(values: Sequence[object]) -> str:
    return "valid: " + ", ".join(str(v) for v in values)


class _Ctx:
    """Raises one-line errors naming the file and the key path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, key: str, message: str, hint: str | None = None) -> InventoryError:
        return InventoryError(f"{self.path}: {key}: {message}", hint=hint)

    def mapping(self, value: Any, key: str, allowed: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping, got {_kind(value)}")
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise self.fail(_join(key, str(unknown[0])), "unknown key", _valid(allowed))
        return value

    def required(self, m: Mapping[str, Any], key: str, name: str) -> Any:
        if m.get(name) is None:
            raise self.fail(_join(key, name), "is required")
        return m[name]

    def string(self, value: Any, key: str, pattern: re.Pattern[str] | None = None,
               what: str = "") -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, got {_kind(value)}")
        if pattern is not None and not pattern.match(value):
            raise self.fail(key, f"{value!r} is not valid", what or f"must match {pattern.pattern}")
        return value

    def abspath(self, value: Any, key: str) -> str:
        s = self.string(value, key)
        if not s.startswith("/"):
            raise self.fail(key, f"{s!r} is not an absolute path", "valid: a path starting with /")
        return s

    def number(self, value: Any, key: str, lo: float, hi: float = float("inf"),
               lo_open: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, got {_kind(value)}")
        bad = value <= lo if lo_open else value < lo
        if bad or value > hi:
            lo_s = f"> {lo:g}" if lo_open else f">= {lo:g}"
            hint = f"valid: {lo_s}" + ("" if hi == float("inf") else f" and <= {hi:g}")
            raise self.fail(key, f"{value!r} is out of range", hint)
        return float(value)

    def integer(self, value: Any, key: str, lo: int, hi: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {_kind(value)}")
        if value < lo or (hi is not None and value > hi):
            hint = f"valid: {lo}..{hi}" if hi is not None else f"valid: >= {lo}"
            raise self.fail(key, f"{value} is out of range", hint)
        return value

    def boolean(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {_kind(value)}")
        return value

    def choice(self, value: Any, key: str, choices: Sequence[str]) -> str:
        if value not in choices:
            raise self.fail(key, f"{value!r} is not valid", _valid(choices))
        return value

    def argv(self, value: Any, key: str, placeholders: Sequence[str]) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(key, f"must be a non-empty list of strings (argv), got {_kind(value)}",
                            'e.g. [python3, "{app_dir}/run.py", "{dataset}"]')
        out = []
        for i, item in enumerate(value):
            k = f"{key}[{i}]"
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                raise self.fail(k, f"must be a string, got {_kind(item)}")
            s = str(item)
            try:
                names = [f for _, f, _, _ in string.Formatter().parse(s) if f is not None]
            except ValueError as e:
                raise self.fail(k, f"bad placeholder syntax in {s!r}: {e}",
                                "use {name}; write {{ and }} for literal braces") from None
            for n in names:
                if n not in placeholders:
                    raise self.fail(k, f"unknown placeholder {{{n}}}", _valid(placeholders))
            out.append(s)
        return tuple(out)


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory file (raises InventoryError, one line)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InventoryError(f"{p}: cannot read inventory: {e.strerror or e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InventoryError(f"{p}{line}: malformed YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise InventoryError(f"{p}: malformed YAML: {e}") from None
    return parse_inventory(data, str(p), base_dir=p.parent)


TOP_KEYS = ("version", "name", "hosts", "hosts_from", "storage", "knobs", "assignments",
            "application", "monitors", "policies")


def parse_inventory(data: Any, path: str = "<inventory>", base_dir: Path | None = None,
                    ) -> Inventory:
    """Validate an already-parsed YAML document (``path`` is used in messages)."""
    c = _Ctx(path)
    base = base_dir or Path(".")
    top = c.mapping(data if data is not None else {}, "", TOP_KEYS)
    if "version" in top and top["version"] != 1:
        raise c.fail("version", f"{top['version']!r} is not supported", "valid: 1")
    hosts = _hosts(c, top, base)
    knobs = _knobs(c, top.get("knobs"))
    names = [k.name for k in knobs]
    return Inventory(
        path=path,
        name=c.string(top.get("name", Path(path).stem), "name"),
        hosts=hosts,
        knobs=knobs,
        application=_application(c, c.required(top, "", "application"), names),
        storage=_storage(c, top.get("storage", {})),
        monitors=_monitors(c, top.get("monitors", {})),
        policies=_policies(c, top.get("policies", {})),
        assignments=_assignments(c, top.get("assignments"), knobs),
    )


HOST_KEYS = ("name", "address", "port", "user", "key_file", "known_hosts", "role",
             "data_iface", "data_address", "peer", "peer_iface")


def _hosts(c: _Ctx, top: Mapping[str, Any], base: Path) -> tuple[Host, ...]:
    if "hosts" in top and "hosts_from" in top:
        raise c.fail("hosts_from", "cannot be combined with hosts", "valid: one of the two")
    if "hosts_from" in top:
        src = base / c.string(top["hosts_from"], "hosts_from")
        other = load_inventory_hosts(src)
        return other
    raw = c.required(top, "", "hosts")
    if not isinstance(raw, list) or not raw:
        raise c.fail("hosts", f"must be a non-empty list, got {_kind(raw)}")
    hosts = [_host(c, h, f"hosts[{i}]", base) for i, h in enumerate(raw)]
    seen: dict[str, int] = {}
    for i, h in enumerate(hosts):
        if h.name in seen:
            raise c.fail(f"hosts[{i}].name", f"duplicate host name {h.name!r}",
                         f"already used by hosts[{seen[h.name]}]")
        seen[h.name] = i
    storage = [h.name for h in hosts if h.role == "storage"]
    if not storage:
        raise c.fail("hosts", "no host has role storage", "need at least one storage host")
    if not any(h.role == "compute" for h in hosts):
        raise c.fail("hosts", "no host has role compute", "need at least one compute host")
    out = []
    for i, h in enumerate(hosts):
        if h.role == "compute":
            if h.peer is None:
                if len(storage) > 1:
                    raise c.fail(f"hosts[{i}].peer", "is required with several storage hosts",
                                 _valid(storage))
                h = Host(**{**h.__dict__, "peer": storage[0]})
            elif h.peer not in storage:
                raise c.fail(f"hosts[{i}].peer", f"{h.peer!r} is not a storage host",
                             _valid(storage))
        elif h.peer is not None or h.peer_iface is not None:
            key = "peer" if h.peer is not None else "peer_iface"
            raise c.fail(f"hosts[{i}].{key}", "only compute hosts name a peer",
                         "remove it from the storage host")
        out.append(h)
    return tuple(out)


def load_inventory_hosts(path: Path) -> tuple[Host, ...]:
    """The validated ``hosts`` of another inventory file (for ``hosts_from``)."""
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as e:
        raise InventoryError(f"{path}: cannot read inventory: {e.strerror or e}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InventoryError(f"{path}{line}: malformed YAML: {e.problem}") from None
    c = _Ctx(str(path))
    top = c.mapping(data if data is not None else {}, "", TOP_KEYS)
    if "hosts_from" in top:
        raise c.fail("hosts_from", "chained hosts_from is not supported", "valid: hosts")
    return _hosts(c, top, path.parent)


def _host(c: _Ctx, raw: Any, key: str, base: Path) -> Host:
    m = c.mapping(raw, key, HOST_KEYS)

    def opt_file(name: str) -> str | None:
        v = m.get(name)
        if v is None:
            return None
        s = c.string(v, f"{key}.{name}")
        return str((base / Path(s).expanduser()).resolve()) if not s.startswith("/") else s

    data_address = c.string(c.required(m, key, "data_address"), f"{key}.data_address")
    try:
        ipaddress.ip_address(data_address)
    except ValueError:
        raise c.fail(f"{key}.data_address", f"{data_address!r} is not an IP address",
                     "valid: e.g. 10.77.1.11") from None
    address = c.string(c.required(m, key, "address"), f"{key}.address",
                       re.compile(r"^[A-Za-z0-9_.:-]+$"), "valid: a host name or IP address")
    return Host(
        name=c.string(c.required(m, key, "name"), f"{key}.name", _NAME,
                      "valid: letters, digits, _ . - (max 63)"),
        address=address,
        role=c.choice(c.required(m, key, "role"), f"{key}.role", ROLES),
        data_iface=c.string(c.required(m, key, "data_iface"), f"{key}.data_iface", _IFACE,
                            "valid: an interface name (max 15 of letters, digits, _ . : -)"),
        data_address=data_address,
        port=c.integer(m.get("port", 22), f"{key}.port", 1, 65535),
        user=c.string(m.get("user", "root"), f"{key}.user", _NAME, "valid: a user name"),
        key_file=opt_file("key_file"),
        known_hosts=opt_file("known_hosts"),
        peer=None if m.get("peer") is None else c.string(m["peer"], f"{key}.peer"),
        peer_iface=None if m.get("peer_iface") is None
        else c.string(m["peer_iface"], f"{key}.peer_iface", _IFACE, "valid: an interface name"),
    )


KNOB_KEYS = ("name", "kind", "levels", "unit")


def _knobs(c: _Ctx, raw: Any) -> tuple[Knob, ...]:
    if raw is None:
        raise c.fail("knobs", "is required", "a list of {name, kind, levels}")
    if not isinstance(raw, list) or not raw:
        raise c.fail("knobs", f"must be a non-empty list, got {_kind(raw)}")
    knobs: list[Knob] = []
    for i, item in enumerate(raw):
        key = f"knobs[{i}]"
        m = c.mapping(item, key, KNOB_KEYS)
        kind = c.choice(c.required(m, key, "kind"), f"{key}.kind", tuple(KNOB_KINDS))
        spec = KNOB_KINDS[kind]
        name = c.string(m.get("name", kind), f"{key}.name", _IDENT,
                        "valid: an identifier (letters, digits, _)")
        if name in PLACEHOLDERS:
            raise c.fail(f"{key}.name", f"{name!r} is reserved", _valid(PLACEHOLDERS))
        levels_raw = c.required(m, key, "levels")
        if not isinstance(levels_raw, list) or not levels_raw:
            raise c.fail(f"{key}.levels", f"must be a non-empty list of numbers, "
                         f"got {_kind(levels_raw)}")
        levels = tuple(c.number(v, f"{key}.levels[{j}]", spec.lo, spec.hi, spec.lo_open)
                       for j, v in enumerate(levels_raw))
        if len(set(levels)) != len(levels):
            raise c.fail(f"{key}.levels", "has duplicate levels", "each level once")
        if kind == "cpu_share" and any(abs(v * 100 - round(v * 100)) > 1e-9 for v in levels):
            raise c.fail(f"{key}.levels", "cpu_share needs a resolution of 0.01",
                         "valid: e.g. 0.25, 0.5, 1.0")
        if any(k.name == name for k in knobs):
            raise c.fail(f"{key}.name", f"duplicate knob name {name!r}", "each name once")
        if any(k.kind == kind for k in knobs):
            raise c.fail(f"{key}.kind", f"a second {kind} knob", "each kind at most once")
        unit = c.string(m.get("unit", spec.unit), f"{key}.unit")
        knobs.append(Knob(name, kind, tuple(sorted(levels)), unit))
    return tuple(knobs)


def _assignments(c: _Ctx, raw: Any, knobs: tuple[Knob, ...]) -> tuple[tuple[float, ...], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise c.fail("assignments", f"must be a non-empty list, got {_kind(raw)}")
    names = [k.name for k in knobs]
    out = []
    for i, item in enumerate(raw):
        key = f"assignments[{i}]"
        m = c.mapping(item, key, names)
        row = []
        for k in knobs:
            v = c.number(c.required(m, key, k.name), f"{key}.{k.name}", float("-inf"))
            if v not in k.levels:
                raise c.fail(f"{key}.{k.name}", f"{v:g} is not a level of knob {k.name}",
                             _valid([f"{x:g}" for x in k.levels]))
            row.append(v)
        out.append(tuple(row))
    return tuple(out)


APP_KEYS = ("name", "command", "dataset", "workdir", "timeout_s", "repeats", "threads")
DATASET_KEYS = ("path", "size_mb", "generate")


def _application(c: _Ctx, raw: Any, knob_names: Sequence[str]) -> Application:
    key = "application"
    m = c.mapping(raw, key, APP_KEYS)
    placeholders = (*PLACEHOLDERS, *knob_names)
    d = c.mapping(c.required(m, key, "dataset"), f"{key}.dataset", DATASET_KEYS)
    dpath = c.string(c.required(d, f"{key}.dataset", "path"), f"{key}.dataset.path")
    if dpath.startswith("/") or ".." in Path(dpath).parts:
        raise c.fail(f"{key}.dataset.path", f"{dpath!r} must be relative to storage.export",
                     "valid: e.g. compress/data.bin, without ..")
    size = d.get("size_mb")
    dataset = Dataset(
        path=dpath,
        size_mb=None if size is None else c.number(size, f"{key}.dataset.size_mb", 0, lo_open=True),
        generate=None if d.get("generate") is None
        else c.argv(d["generate"], f"{key}.dataset.generate", placeholders),
    )
    return Application(
        name=c.string(c.required(m, key, "name"), f"{key}.name", _NAME, "valid: letters, "
                      "digits, _ . -"),
        command=c.argv(c.required(m, key, "command"), f"{key}.command", placeholders),
        dataset=dataset,
        workdir=c.abspath(m.get("workdir", "/tmp/nimo-work"), f"{key}.workdir"),
        timeout_s=c.number(m.get("timeout_s", 300), f"{key}.timeout_s", 0, lo_open=True),
        repeats=c.integer(m.get("repeats", 1), f"{key}.repeats", 1, 100),
        threads=c.integer(m.get("threads", 1), f"{key}.threads", 1, 1024),
    )


def _storage(c: _Ctx, raw: Any) -> Storage:
    m = c.mapping(raw, "storage", ("method", "export", "mountpoint", "identity_file",
                                   "known_hosts"))
    d = Storage()
    return Storage(
        method=c.choice(m.get("method", d.method), "storage.method", STORAGE_METHODS),
        export=c.abspath(m.get("export", d.export), "storage.export"),
        mountpoint=None if m.get("mountpoint") is None
        else c.abspath(m["mountpoint"], "storage.mountpoint"),
        identity_file=None if m.get("identity_file") is None
        else c.abspath(m["identity_file"], "storage.identity_file"),
        known_hosts=None if m.get("known_hosts") is None
        else c.abspath(m["known_hosts"], "storage.known_hosts"),
    )


def _monitors(c: _Ctx, raw: Any) -> Monitors:
    m = c.mapping(raw, "monitors", ("sar", "sar_interval_s", "tshark", "profile"))
    d = Monitors()
    return Monitors(
        sar=c.boolean(m.get("sar", d.sar), "monitors.sar"),
        sar_interval_s=c.integer(m.get("sar_interval_s", d.sar_interval_s),
                                 "monitors.sar_interval_s", 1, 3600),
        tshark=c.boolean(m.get("tshark", d.tshark), "monitors.tshark"),
        profile=c.boolean(m.get("profile", d.profile), "monitors.profile"),
    )


def _policies(c: _Ctx, raw: Any) -> Policies:
    m = c.mapping(raw, "policies", ("on_failure", "max_failures", "retries"))
    mf = m.get("max_failures")
    return Policies(
        on_failure=c.choice(m.get("on_failure", "continue"), "policies.on_failure", ON_FAILURE),
        max_failures=None if mf is None else c.integer(mf, "policies.max_failures", 0),
        retries=c.integer(m.get("retries", 1), "policies.retries", 0, 10),
    )


def render_argv(template: Sequence[str], values: Mapping[str, object]) -> list[str]:
    """Fill ``{placeholders}`` of an argv template; each element stays ONE argv item, so no
    value is ever parsed by a shell. Floats print without a trailing ``.0``."""
    shown = {k: (f"{v:g}" if isinstance(v, float) else str(v)) for k, v in values.items()}
    try:
        return [item.format_map(shown) for item in template]
    except KeyError as e:
        raise InventoryError(f"placeholder {{{e.args[0]}}} has no value",
                             hint=_valid(sorted(shown))) from None
