"""``nimo replay DATA.csv``: a learning campaign answered from recorded measurements.

Exits like ``nimo campaign run`` (``workbench.exitstatus``): 0 only when the campaign ended
by its stop rule with a model.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    from workbench.options import add_flags
    from workbench.replay import ReplayOptions

    p = sub.add_parser(
        "replay",
        help="run a learning campaign against recorded measurements (CSV)",
        description="Replay a NIMO learning campaign: each run is answered from the CSV; "
        "an external test set is withheld from the planner and used only to report accuracy.",
    )
    p.add_argument("data", metavar="DATA.csv")
    p.add_argument("--design", help="design YAML file or preset name (default: recommended)")
    add_flags(p, ReplayOptions)
    p.add_argument("--json", metavar="OUT.json",
                   help="write the campaign as JSON (rewritten after every run)")
    p.add_argument("--store", metavar="URL", help="campaign store (default $NIMO_STORE_URL or "
                   "sqlite:///./nimo.db when --name is given; nothing stored without --store "
                   "or --name)")
    p.add_argument("--name", help="campaign name in the store")
    p.add_argument("--quiet", action="store_true", help="no live convergence table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.campaigns import (
        check_json_target,
        launch_replay,
        write_json,
    )
    from workbench.cli.campaign import run_campaign
    from workbench.designs import load_design
    from workbench.options import from_args
    from workbench.replay import ReplayOptions, ReplayRunner
    from workbench.shipped import resolve_data

    check_json_target(args.json)
    design = load_design(args.design)
    path = str(resolve_data(args.data))  # a CSV, or the name of a shipped dataset
    runner = ReplayRunner.open(from_args(ReplayOptions, args, path=path))

    def summarize(doc: dict[str, Any], judged: Any) -> None:
        replay_summary(doc, judged, design.name, len(runner.external))
        if args.json:
            print(f"wrote {args.json}")

    stream = None if args.json == "-" else args.json  # stdout: written once, at the end

    def campaign() -> Any:
        result = launch_replay(runner, design=design, seed=args.seed, store_url=args.store,
                               name=args.name, json_out=stream, progress=not args.quiet)
        if args.json == "-":
            write_json(result, args.json)
        return result

    return run_campaign(campaign, args.name, summarize, command="replay")


def learning_share(final: dict[str, Any]) -> str:
    """The learning time as a share of the all-samples time (every distinct assignment
    measured once, at the mean T of its repeats). A run replays one recorded repeat, so
    learning can cost more than that: then the line says so instead of a bare share."""
    from workbench.cli.progress import format_hours

    spent, total = final["acquisition_s"], final.get("all_samples_s")
    share = 100.0 * spent / total if total else float("nan")
    text = (f"learning time {format_hours(spent)} = {share:.1f}% of all-samples "
            f"{format_hours(total or 0)}")
    if share > 100.0:
        text += (" (more than all-samples: each run replays one recorded repeat, and those "
                 "drawn here were slower than the mean T per assignment all-samples counts)")
    return text


def replay_summary(doc: dict[str, Any], judged: Any, design: str, external: int) -> None:
    """Failures first, then the design's runs, learning time and accuracy, then warnings."""
    from workbench.exitstatus import stop_kind

    final = doc["final"]
    for problem in judged.problems:
        print(f"design {design}: {problem}")
    mape = final["external_mape_pct"]
    reason = doc["stopped_because"]
    print(f"design {design}: {final['runs']} runs, {learning_share(final)}; external MAPE "
          f"{'-' if mape is None else f'{mape:.1f}%'} on {external} assignments; "
          f"stopped by {stop_kind(reason)}: {reason}", file=sys.stdout)
    median = final.get("external_median_ape_pct")
    if median is not None:
        print(f"design {design}: external median APE {median:.1f}%")
    family = final.get("family") or {}
    if family.get("error"):
        print(f"design {design}: warning: family {family.get('name', '?')} not fitted: "
              f"{family['error']}")
    elif family.get("name"):
        fm, fmed = family.get("external_mape_pct"), family.get("external_median_ape_pct")
        held = family.get("external_coverage_90")
        print(f"design {design}: family {family['name']} (chosen by {family['chosen_by']}): "
              f"external MAPE {'-' if fm is None else f'{fm:.1f}%'}, median APE "
              f"{'-' if fmed is None else f'{fmed:.1f}%'}, 90% interval held "
              f"{'- (no interval)' if held is None else f'{held:.0%}'}")
    for warning in judged.warnings:
        print(f"design {design}: warning: {warning}")
