"""``nimo clean INVENTORY.yaml [--campaign NAME]``: remove what nimo's runs left on the
inventory's hosts (only what they recorded making; only NAME's with ``--campaign``)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("clean", help="remove what nimo's runs left on every host "
                                            "(mounts, rules, qdiscs, cgroups, monitors, "
                                            "daemons, private dirs), and nothing else")
    p.add_argument("inventory", metavar="INVENTORY.yaml")
    p.add_argument("--campaign", metavar="NAME", default=None,
                   help="only what campaign NAME's runs left")
    p.set_defaults(func=cmd_clean)


def cmd_clean(args: argparse.Namespace) -> int:
    from workbench.clean import clean_inventory

    failed = 0
    for name, res in clean_inventory(args.inventory, campaign=args.campaign).items():
        if isinstance(res, BaseException):
            failed += 1
            print(f"{name}: error: {res}")
        else:
            print(res.summary())
    return 1 if failed else 0
