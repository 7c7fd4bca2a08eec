"""``nimo model export CAMPAIGN -o model.json``: a stored model version as a cost-model file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nimo.errors import FileAccessError
from nimo.store import DEFAULT_URL


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("model", help="export, score, update and fit cost models")
    sub = p.add_subparsers(dest="model_command", metavar="ACTION")
    sub.required = True
    ex = sub.add_parser("export", help="write a campaign's cost model as JSON")
    ex.add_argument("campaign", metavar="CAMPAIGN")
    ex.add_argument("--store", metavar="URL", default=None,
                    help=f"campaign store (default $NIMO_STORE_URL or {DEFAULT_URL})")
    ex.add_argument("--version", type=int, metavar="K", help="model version (default: latest)")
    ex.add_argument("--family", action="store_true",
                    help="the model of the design's family (`predictors: {family: ...}`) "
                    "fitted when the live campaign ended, instead of the planner's")
    ex.add_argument("-o", "--output", required=True, metavar="FILE", help="model.json to write")
    ex.set_defaults(func=cmd_export)
    from workbench.cli.model_runs import register as register_runs

    register_runs(sub)  # score, update, fit


def cmd_export(args: argparse.Namespace) -> int:
    from nimo.model import CostModel
    from nimo.store import open_store

    if args.family:
        return export_family(args)
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


def export_family(args: argparse.Namespace) -> int:
    """``--family``: the family model stored with the campaign (``final.family.model``)."""
    from nimo.errors import ConfigError
    from nimo.families import FamilyModel
    from nimo.store import open_store

    if args.version is not None:
        raise ConfigError("--family: a campaign has one family model", hint="drop --version")
    with open_store(args.store, create=False) as store:
        family = store.campaign(args.campaign).spec.get("family_result") or {}
    if not family.get("model"):
        why = family.get("error") or ("its design names no `predictors: {family: ...}`, or "
                                      "it has not finished")
        raise ConfigError(f"campaign {args.campaign!r} has no family model: {why}",
                          hint="a live campaign whose design sets predictors.family, run "
                          "to its end")
    model = FamilyModel.from_dict(family["model"])  # validates what we hand over
    write_text(Path(args.output), json.dumps(model.to_dict(), indent=2) + "\n")
    print(f"wrote {args.output}: {model.family} family model of {args.campaign} "
          f"({family.get('training_runs')} training runs)")
    return 0


def write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
