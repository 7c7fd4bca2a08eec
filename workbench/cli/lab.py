"""``nimo lab up|down|status``: a multi-host lab of network namespaces on this machine."""

from __future__ import annotations

import argparse
import json
from typing import Any

from workbench.lab import DEFAULT_DIR, DEFAULT_PREFIX, DEFAULT_SUBNET, Lab


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("lab", help="build or remove a namespace lab on this machine")
    sub = p.add_subparsers(dest="lab_command", metavar="ACTION")
    sub.required = True
    for name, func, help_text in (
        ("up", cmd_up, "build the lab and write DIR/inventory.yaml"),
        ("down", cmd_down, "remove everything the lab created (idempotent)"),
        ("status", cmd_status, "show the lab's hosts and whether they are up"),
    ):
        s = sub.add_parser(name, help=help_text)
        s.add_argument("dir_pos", nargs="?", metavar="DIR", help="lab directory (same as --dir)")
        s.add_argument("--dir", default=None, help=f"lab directory (default {DEFAULT_DIR})")
        if name == "up":
            s.add_argument("--hosts", type=int, default=None,
                           help="number of hosts: 1 storage + N-1 compute (default 3; "
                                "with --slurm 5: 4 Slurm nodes)")
            s.add_argument("--slurm", action="store_true",
                           help="also a Slurm cluster: slurmctld on the storage host, a "
                                "slurmd per compute host; the inventory gets executor: slurm")
            s.add_argument("--prefix", default=DEFAULT_PREFIX,
                           help="name prefix of namespaces/links (default $NIMO_LAB_PREFIX "
                                f"or {DEFAULT_PREFIX})")
            s.add_argument("--subnet-base", default=DEFAULT_SUBNET,
                           help=f"first two octets of the lab subnets (default {DEFAULT_SUBNET})")
        s.set_defaults(func=func)


def _dir(args: argparse.Namespace) -> str:
    return args.dir or args.dir_pos or DEFAULT_DIR


def cmd_up(args: argparse.Namespace) -> int:
    hosts = args.hosts if args.hosts is not None else (5 if args.slurm else 3)
    lab = Lab(_dir(args), hosts=hosts, prefix=args.prefix, subnet_base=args.subnet_base,
              slurm=args.slurm)
    lab.up()
    for h in lab.hosts:
        print(f"{h.name:10} {h.role:8} ssh {h.address:12} data {h.data_iface} {h.data_address}")
    if lab.slurm:
        print(f"slurm: slurmctld on {lab.hosts[0].name}, slurmd on every compute host, "
              f"up in {lab.timings.get('slurm_up_s', 0):.2f} s; SLURM_CONF={lab.dir}/slurm/"
              "slurm.conf")
    print(f"lab up in {lab.timings.get('up_s', 0):.2f} s; inventory: {lab.inventory_path}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    lab = Lab(_dir(args))
    removed = lab.down()
    print(f"lab down in {removed['down_s']:.2f} s: {len(removed['netns'])} namespaces, "
          f"{len(removed['pids'])} processes, {len(removed['cgroups'])} cgroups, "
          f"{len(removed['dirs'])} temp dirs, {len(removed['markers'])} markers removed")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    lab = Lab(_dir(args))
    up = lab.state_path.exists() and lab.is_up()
    print(json.dumps({"dir": str(lab.dir), "up": up, "prefix": lab.prefix,
                      "hosts": [h.__dict__ for h in lab.hosts] if up else []}, indent=2))
    return 0 if up else 1
