"""``nimo clean INVENTORY.yaml``: remove every nimo- leftover from the inventory's hosts."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("clean", help="remove nimo- leftovers (qdiscs, rules, cgroups, "
                                            "mounts, temp dirs) from every host")
    p.add_argument("inventory", metavar="INVENTORY.yaml")
    p.set_defaults(func=cmd_clean)


def cmd_clean(args: argparse.Namespace) -> int:
    from pathlib import Path

    from workbench.clean import clean
    from workbench.inventory import load_inventory_hosts
    from workbench.remote import Connection, map_hosts

    hosts = {h.name: h for h in load_inventory_hosts(Path(args.inventory))}
    conns = [Connection.for_host(h, connect_timeout=5, retries=1) for h in hosts.values()]
    def peers(name: str) -> list[str]:
        h = hosts[name]
        if h.role == "compute":
            return [hosts[h.peer].data_address] if h.peer in hosts else []
        return [o.data_address for o in hosts.values() if o.peer == name]

    results = map_hosts(conns, lambda c: clean(c, [hosts[c.name].data_iface], peers(c.name)))
    failed = 0
    for name, res in results.items():
        if isinstance(res, BaseException):
            failed += 1
            print(f"{name}: error: {res}")
        else:
            print(res.summary())
    for c in conns:
        c.close()
    return 1 if failed else 0
