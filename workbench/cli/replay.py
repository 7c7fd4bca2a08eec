"""``nimo replay DATA.csv``: a learning campaign answered from recorded measurements."""

from __future__ import annotations

import argparse
import sys

from workbench.designs import load_design
from workbench.options import add_flags, from_args
from workbench.replay import ReplayOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="run a learning campaign against recorded measurements (CSV)",
        description="Replay a NIMO learning campaign: each run is answered from the CSV; "
        "an external test set is withheld from the planner and used only to report accuracy.",
    )
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--design", help="design YAML file or preset name (default: recommended)")
    add_flags(p, ReplayOptions)
    p.add_argument("--json", metavar="OUT.json", help="write the campaign as JSON")
    p.add_argument("--store", metavar="URL", help="campaign store (default sqlite:///nimo.db "
                   "when --name is given; nothing stored without --store or --name)")
    p.add_argument("--name", help="campaign name in the store")
    p.add_argument("--quiet", action="store_true", help="no live convergence table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.campaigns import launch_replay
    from workbench.replay import ReplayRunner

    design = load_design(args.design)
    runner = ReplayRunner.open(from_args(ReplayOptions, args, path=args.data))
    result = launch_replay(
        runner, design=design, seed=args.seed, store_url=args.store, name=args.name,
        json_out=args.json, progress=not args.quiet,
    )
    final = result.to_dict()["final"]
    share = (100.0 * final["acquisition_s"] / final["all_samples_s"]
             if final.get("all_samples_s") else float("nan"))
    mape = final["external_mape_pct"]
    print(f"design {design.name}: {final['runs']} runs, learning time "
          f"{final['acquisition_s'] / 3600:.2f} h = {share:.1f}% of all-samples "
          f"{final['all_samples_s'] / 3600:.2f} h; external MAPE "
          f"{'-' if mape is None else f'{mape:.1f}%'} on {len(runner.external)} assignments; "
          f"stopped: {result.stopped_because}", file=sys.stdout)
    if args.json:
        print(f"wrote {args.json}")
    return 0
