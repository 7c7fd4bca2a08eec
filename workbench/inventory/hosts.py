"""The ``hosts`` of an inventory (or ``hosts_from`` another one): names unique, at least one
compute and one storage host, every compute host wired to a storage ``peer``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nimo.config import Checker, Text, valid_hint
from workbench.errors import InventoryError
from workbench.inventory.model import TOP_KEYS, Host
from workbench.inventory.values import LocalFile
from workbench.yamlfile import read_yaml


def read_inventory_yaml(path: Path) -> Any:
    """The YAML document of an inventory file (InventoryError naming the file and line)."""
    return read_yaml(path, "inventory", malformed=InventoryError, unreadable=InventoryError)


def load_inventory_hosts(path: Path) -> tuple[Host, ...]:
    """The validated ``hosts`` of another inventory file (for ``hosts_from``)."""
    data = read_inventory_yaml(path)
    ck = Checker(str(path), InventoryError)
    top = ck.mapping(data if data is not None else {}, "", TOP_KEYS)
    if "hosts_from" in top:
        raise ck.fail("hosts_from", "chained hosts_from is not supported", "valid: hosts")
    if top.get("executor") == "slurm" and "hosts" not in top:
        return ()  # a Slurm inventory may name no hosts (its nodes are Slurm's)
    return parse_hosts(ck, top, path.parent)


def parse_hosts(ck: Checker, top: Mapping[str, Any], base: Path) -> tuple[Host, ...]:
    """The hosts of the top-level mapping ``top``; relative files are relative to ``base``."""
    if "hosts" in top and "hosts_from" in top:
        raise ck.fail("hosts_from", "cannot be combined with hosts", "valid: one of the two")
    if "hosts_from" in top:
        target = base / Text().parse(ck, "hosts_from", top["hosts_from"])
        try:
            return load_inventory_hosts(target)
        except InventoryError as e:  # name the inventory that points there, and the key
            raise InventoryError(f"{ck.source}: hosts_from: {e.message}", hint=e.hint) from None
    raw = ck.non_empty_list(ck.required(top, "", "hosts"), "hosts")
    files = {"key_file": LocalFile(base), "known_hosts": LocalFile(base)}
    hosts = [ck.section(Host, h, f"hosts[{i}]", files) for i, h in enumerate(raw)]
    _check_unique_names(ck, hosts)
    storage = _storage_names(ck, hosts)
    return tuple(_wired(ck, h, f"hosts[{i}]", storage) for i, h in enumerate(hosts))


def _check_unique_names(ck: Checker, hosts: Sequence[Host]) -> None:
    seen: dict[str, int] = {}
    for i, h in enumerate(hosts):
        if h.name in seen:
            raise ck.fail(f"hosts[{i}].name", f"duplicate host name {h.name!r}",
                          f"already used by hosts[{seen[h.name]}]")
        seen[h.name] = i


def _storage_names(ck: Checker, hosts: Sequence[Host]) -> list[str]:
    storage = [h.name for h in hosts if h.role == "storage"]
    if not storage:
        raise ck.fail("hosts", "no host has role storage", "need at least one storage host")
    if not any(h.role == "compute" for h in hosts):
        raise ck.fail("hosts", "no host has role compute", "need at least one compute host")
    return storage


def _wired(ck: Checker, h: Host, key: str, storage: Sequence[str]) -> Host:
    """``h`` with its storage peer checked (and filled in when there is only one)."""
    if h.role != "compute":
        if h.peer is not None or h.peer_iface is not None:
            name = "peer" if h.peer is not None else "peer_iface"
            raise ck.fail(f"{key}.{name}", "only compute hosts name a peer",
                          "remove it from the storage host")
        return h
    if h.peer is None:
        if len(storage) > 1:
            raise ck.fail(f"{key}.peer", "is required with several storage hosts",
                          valid_hint(storage))
        return dataclasses.replace(h, peer=storage[0])
    if h.peer not in storage:
        raise ck.fail(f"{key}.peer", f"{h.peer!r} is not a storage host", valid_hint(storage))
    return h
