"""``nimo model export CAMPAIGN -o model.json``: a stored model version as a cost-model file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nimo.errors import FileAccessError
from nimo.store import DEFAULT_URL, open_store


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("model", help="export, score, update and fit cost models")
    sub = p.add_subparsers(dest="model_command", metavar="ACTION")
    sub.required = True
    ex = sub.add_parser("export", help="write a campaign's cost model as JSON")
    ex.add_argument("campaign", metavar="CAMPAIGN")
    ex.add_argument("--store", metavar="URL", default=None,
                    help=f"campaign store (default $NIMO_STORE_URL or {DEFAULT_URL})")
    ex.add_argument("--version", type=int, metavar="K", help="model version (default: latest)")
    ex.add_argument("-o", "--output", required=True, metavar="FILE", help="model.json to write")
    ex.set_defaults(func=cmd_export)
    from workbench.cli.model_runs import register as register_runs

    register_runs(sub)  # score, update, fit


def cmd_export(args: argparse.Namespace) -> int:
    from nimo.model import CostModel

    with open_store(args.store, create=False) as store:
        version = store.model(args.campaign, args.version)
    model = CostModel.from_dict(version.model)  # validates what we hand to a scheduler
    try:
        path = model.save(Path(args.output))
    except OSError as e:
        raise FileAccessError(f"cannot write {args.output}: {e.strerror or e}") from None
    print(f"wrote {path}: model version {version.version} of {args.campaign} "
          f"(after run {version.run})")
    return 0
