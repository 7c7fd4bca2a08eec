"""``nimo replay DATA.csv``: a learning campaign answered from recorded measurements."""

from __future__ import annotations

import argparse
import sys

from nimo.errors import ConfigError
from workbench.designs import load_design


def _where(text: str) -> tuple[str, str]:
    col, sep, value = text.partition("=")
    if not sep or not col:
        raise argparse.ArgumentTypeError(f"expected COL=VALUE, got {text!r}")
    return col.strip(), value.strip()


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="run a learning campaign against recorded measurements (CSV)",
        description="Replay a NIMO learning campaign: each run is answered from the CSV; "
        "an external test set is withheld from the planner and used only to report accuracy.",
    )
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--design", help="design YAML file or preset name (default: recommended)")
    p.add_argument("--attributes", help="comma-separated attribute columns (default: every "
                   "numeric non-reserved column)")
    p.add_argument("--time-column", default="T", help="run-time column (default T)")
    p.add_argument("--where", action="append", type=_where, default=[], metavar="COL=VALUE",
                   help="keep only rows with COL equal to VALUE (repeatable)")
    p.add_argument("--external-test", type=int, default=30, metavar="N",
                   help="assignments withheld for reporting accuracy (default 30)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="OUT.json", help="write the campaign as JSON")
    p.add_argument("--store", metavar="URL", help="campaign store (default sqlite:///nimo.db "
                   "when --name is given; nothing stored without --store or --name)")
    p.add_argument("--name", help="campaign name in the store")
    p.add_argument("--quiet", action="store_true", help="no live convergence table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.campaigns import launch_replay
    from workbench.replay import open_replay

    design = load_design(args.design)
    attributes = None
    if args.attributes:
        attributes = [a.strip() for a in args.attributes.split(",") if a.strip()]
        if not attributes:
            raise ConfigError("--attributes: empty list")
    runner, external = open_replay(args.data, attributes, args.time_column, args.where,
                                   args.external_test, args.seed)
    result = launch_replay(
        runner, design=design, seed=args.seed, external=external, store_url=args.store,
        name=args.name, dataset=runner.spec, json_out=args.json, progress=not args.quiet,
    )
    final = result.to_dict()["final"]
    share = (100.0 * final["acquisition_s"] / final["all_samples_s"]
             if final.get("all_samples_s") else float("nan"))
    mape = final["external_mape_pct"]
    print(f"design {design.name}: {final['runs']} runs, learning time "
          f"{final['acquisition_s'] / 3600:.2f} h = {share:.1f}% of all-samples "
          f"{final['all_samples_s'] / 3600:.2f} h; external MAPE "
          f"{'-' if mape is None else f'{mape:.1f}%'} on {len(external)} assignments; "
          f"stopped: {result.stopped_because}", file=sys.stdout)
    if args.json:
        print(f"wrote {args.json}")
    return 0
