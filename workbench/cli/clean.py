"""``nimo clean INVENTORY.yaml``: remove every nimo- leftover from the inventory's hosts."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("clean", help="remove nimo- leftovers (qdiscs, rules, cgroups, "
                                            "mounts, daemons, temp dirs) from every host")
    p.add_argument("inventory", metavar="INVENTORY.yaml")
    p.set_defaults(func=cmd_clean)


def cmd_clean(args: argparse.Namespace) -> int:
    from workbench.clean import clean_inventory

    failed = 0
    for name, res in clean_inventory(args.inventory).items():
        if isinstance(res, BaseException):
            failed += 1
            print(f"{name}: error: {res}")
        else:
            print(res.summary())
    return 1 if failed else 0
