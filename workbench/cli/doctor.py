"""``nimo doctor INVENTORY``: check every host of an inventory before a campaign.

Exit status: 0 when no host has a blocker (warnings allowed), 1 when one has, 2 for a bad
inventory (one line).
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor", help="check that an inventory's hosts are ready for live runs",
        description="Per host: SSH (key, host key), root, python3, the delay fallback, tc and "
        "qdiscs, cgroups, sysstat, tshark, the storage client, free space, clock skew.")
    p.add_argument("inventory", metavar="INVENTORY.yaml")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table (default) or one JSON document")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.doctor import blockers, diagnose
    from workbench.doctor.report import as_json, print_table
    from workbench.inventory import load_inventory

    findings = diagnose(load_inventory(args.inventory))
    if args.format == "json":
        print(as_json(findings))
    else:
        print_table(findings)
    return 1 if blockers(findings) else 0
