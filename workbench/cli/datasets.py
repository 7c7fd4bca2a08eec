"""``nimo datasets``: where the shipped files are, so that any install can use them.

``nimo datasets`` lists the shipped datasets (``GROUP/NAME`` and path), design presets and
the example inventory; ``nimo datasets path NAME`` prints one dataset's path (``nimo replay``
takes the path; ``nimo replay $(nimo datasets path memory_cliff)`` works from any directory).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("datasets", help="list the shipped datasets, designs and "
                              "inventory", description=__doc__.splitlines()[0].replace("``", ""))
    sub = p.add_subparsers(dest="datasets_command", metavar="ACTION")
    ls = sub.add_parser("list", help="every shipped dataset with its path (the default)")
    ls.set_defaults(func=cmd_list)
    path = sub.add_parser("path", help="print the path of one shipped dataset")
    path.add_argument("name", metavar="NAME", help="GROUP/NAME or NAME, e.g. memory_cliff")
    path.set_defaults(func=cmd_path)
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    from workbench.designs import designs_dir, preset_names
    from workbench.shipped import dataset_names, dataset_path, example_inventory

    print("datasets (nimo replay PATH):")
    for name in dataset_names():
        print(f"  {name:32} {dataset_path(name)}")
    print(f"designs (--design NAME), in {designs_dir()}:")
    print("  " + ", ".join(preset_names()))
    print(f"example inventory: {example_inventory()}")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from workbench.shipped import dataset_path

    print(dataset_path(args.name))
    return 0
