"""``nimo campaign run|resume|status|log|list|submit``: campaigns people can run, leave,
resume and hand to the service."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from nimo.errors import ConfigError
from nimo.records import CampaignKind, CampaignStatus, RunPurpose, RunStatus
from nimo.store import default_url, open_store
from workbench.cli.progress import format_duration, format_pct, format_record
from workbench.options import add_flags, from_args
from workbench.replay import ReplayOptions


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("campaign", help="run, resume and inspect learning campaigns")
    sub = p.add_subparsers(dest="campaign_command", metavar="ACTION")
    sub.required = True

    run = sub.add_parser("run", help="run a live campaign on an inventory's hosts")
    run.add_argument("inventory", metavar="INVENTORY.yaml")
    _design_options(run)
    run.add_argument("--holdout", type=int, default=0, metavar="N",
                     help="then run N random unused assignments and report their MAPE")
    _output_options(run)
    run.add_argument("--name", help="campaign name (default: live-DATE-TIME)")
    run.set_defaults(func=cmd_run)

    res = sub.add_parser("resume", help="continue a stopped or crashed campaign")
    res.add_argument("name", metavar="NAME")
    _output_options(res)
    res.set_defaults(func=cmd_resume)

    st = sub.add_parser("status", help="state, runs and errors of a campaign")
    st.add_argument("name", metavar="NAME")
    _store_option(st)
    st.set_defaults(func=cmd_status)

    lg = sub.add_parser("log", help="convergence log of a campaign")
    lg.add_argument("name", metavar="NAME")
    _store_option(lg)
    lg.set_defaults(func=cmd_log)

    sm = sub.add_parser("samples", help="a campaign's measured samples as a replay CSV")
    sm.add_argument("name", metavar="NAME")
    sm.add_argument("-o", "--output", default="-", metavar="OUT.csv",
                    help="where to write the CSV (default: stdout)")
    _store_option(sm)
    sm.set_defaults(func=cmd_samples)

    ls = sub.add_parser("list", help="campaigns in the store")
    _store_option(ls)
    ls.set_defaults(func=cmd_list)

    sb = sub.add_parser("submit", help="queue a campaign for `nimo serve`")
    sb.add_argument("name", metavar="NAME")
    src = sb.add_mutually_exclusive_group(required=True)
    src.add_argument("--inventory", metavar="INVENTORY.yaml", help="a live campaign")
    src.add_argument("--replay", metavar="DATA.csv", help="a replay campaign")
    add_flags(sb, ReplayOptions, help_prefix="replay: ", skip=("seed",))
    sb.add_argument("--hosts", default="", metavar="H1,H2",
                    help="hosts the campaign needs (live: default all of the inventory)")
    sb.add_argument("--holdout", type=int, default=0, metavar="N")
    _design_options(sb)
    _store_option(sb)
    sb.set_defaults(func=cmd_submit)


def _store_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="URL", default=None,
                   help=f"campaign store (default $NIMO_STORE_URL or {default_url()})")


def _output_options(p: argparse.ArgumentParser) -> None:
    _store_option(p)
    p.add_argument("--json", metavar="OUT", help="write the result document (- for stdout)")
    p.add_argument("--quiet", action="store_true", help="no live progress table")


def _design_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--design", metavar="FILE|PRESET",
                   help="design YAML file or preset name (default: recommended)")
    p.add_argument("--seed", type=int, default=0, metavar="N")


def load_design(ref: str | None) -> dict[str, Any]:
    """A design file or preset name as the stored mapping (``workbench.designs``)."""
    from nimo.campaign import design_to_dict
    from workbench.designs import load_design as load

    return design_to_dict(load(ref))


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.campaigns import launch_live

    if args.holdout < 0:
        raise ConfigError("--holdout must be >= 0")
    result = launch_live(
        args.inventory, design=load_design(args.design), seed=args.seed, holdout=args.holdout,
        store_url=args.store, name=args.name or f"live-{time.strftime('%Y%m%d-%H%M%S')}",
        json_out=args.json, progress=not args.quiet,
    )
    _summary(result.to_dict())
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from workbench.campaigns import resume

    result = resume(args.name, store_url=args.store, json_out=args.json, progress=not args.quiet)
    _summary(result.to_dict())
    return 0


def _summary(doc: dict[str, Any]) -> None:
    final = doc["final"]
    parts = [f"{doc['name']}: stopped ({doc['stopped_because'] or '-'})",
             f"runs {final['runs']}", f"learning time {format_duration(final['acquisition_s'])}"]
    for key, label in (("external_mape_pct", "external MAPE"),
                       ("holdout_mape_pct", "holdout MAPE")):
        if final.get(key) is not None:
            parts.append(f"{label} {final[key]:.1f}%")
    if final.get("holdout_coverage_90") is not None:
        parts.append(f"holdout runs inside 90% interval {final['holdout_coverage_90']:.0%}")
    if final.get("overhead_s_per_run") is not None:
        parts.append(f"overhead {final['overhead_s_per_run']:.2f}s/run")
    if final.get("profile_s_per_run"):
        parts.append(f"profiling {final['profile_s_per_run']:.2f}s/run")
    print(", ".join(parts))


def cmd_status(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        info = store.campaign(args.name)
        runs = store.runs(args.name)
        iterations = store.iterations(args.name)
        models = store.models(args.name)
        leases = [lease.host for lease in store.leases() if lease.campaign == args.name]
    counts = Counter(r.status.stored for r in runs)
    print(f"campaign  {info.name} ({info.kind}, seed {info.seed})")
    print(f"status    {info.status}" + (f" - {info.stopped_because}" if info.stopped_because
                                        else ""))
    print("runs      " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"))
    print(f"samples   {sum(r.sample is not None for r in runs)}")
    if iterations:
        last = iterations[-1]
        print(f"learning  {format_duration(last.acquisition_s)} after run {last.run}")
        print(f"errors    internal {format_pct(last.internal_error_pct)}, "
              f"external {format_pct(last.external_mape_pct)}")
    print(f"models    {len(models)} version(s)")
    holdout = [r for r in runs if r.purpose is RunPurpose.HOLDOUT]
    if holdout or info.spec.get("holdout"):
        done = sum(r.status is RunStatus.DONE for r in holdout)
        line = f"holdout   {done}/{info.spec.get('holdout') or len(holdout)} runs done"
        res = info.spec.get("holdout_result") or {}
        if res.get("holdout_mape_pct") is not None:
            line += f", MAPE {res['holdout_mape_pct']:.1f}%"
        if res.get("holdout_coverage_90") is not None:
            line += f", {res['holdout_coverage_90']:.0%} inside 90% interval"
        if res.get("overhead_s_per_run") is not None:
            line += f", overhead {res['overhead_s_per_run']:.2f}s/run"
        print(line)
    in_flight = [r.run for r in runs if r.status is RunStatus.QUEUED]
    if in_flight:
        print(f"in flight {', '.join(map(str, in_flight))}")
    failed = [r for r in runs if r.status.stored == RunStatus.FAILED]
    for r in failed[-5:]:
        print(f"failed    run {r.run}: {r.reason}")
    if info.spec.get("hosts"):
        print(f"hosts     {', '.join(info.spec['hosts'])}"
              + (f" (leased: {', '.join(leases)})" if leases else ""))
    return 0


def cmd_samples(args: argparse.Namespace) -> int:
    """Every done run (training, test and holdout) in `nimo replay`'s CSV format, so a live
    campaign becomes a dataset that replays answer from."""
    import csv
    import io

    from workbench.replay import METADATA, RESERVED

    with open_store(args.store) as store:
        runs = [r for r in store.runs(args.name) if r.sample is not None]
    if not runs:
        raise ConfigError(f"campaign {args.name!r} has no measured samples yet")
    names = list(runs[0].assignment)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*names, *RESERVED, *METADATA])
    for r in runs:
        s = r.sample
        assert s is not None
        values = [getattr(s, c) for c in RESERVED]
        w.writerow([*(f"{r.assignment[n]:g}" for n in names),
                    *("" if v is None else f"{v:.6g}" for v in values),
                    r.run, r.purpose, r.host or "", f"{s.cost_s:.3f}"])
    if args.output == "-":
        print(buf.getvalue(), end="")
    else:
        Path(args.output).write_text(buf.getvalue())
        print(f"wrote {args.output}: {len(runs)} samples of {args.name}")
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        iterations = store.iterations(args.name)
    if not iterations:
        print(f"{args.name}: no runs told yet")
        return 0
    print(f"{'run':>4}  {'purpose':<9} {'predictor':<9} {'learning':>9}  {'internal':>8}  "
          f"{'external':>8}  assignment  [attributes]")
    for rec in iterations:
        attrs = "; ".join(f"{p}: {','.join(a) or '-'}" for p, a in rec.attributes.items())
        status = "" if rec.status == "done" else f"  {rec.status.upper()}: {rec.reason}"
        print(f"{format_record(rec)}  [{attrs}]{status}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with open_store(args.store) as store:
        campaigns = store.campaigns()
        counts = {c.name: len(store.iterations(c.name)) for c in campaigns}
    if not campaigns:
        print(f"no campaigns in {store.url}")
        return 0
    width = max(4, *(len(c.name) for c in campaigns))
    print(f"{'name':<{width}}  {'kind':<6} {'status':<11} {'runs':>5}  updated")
    for c in campaigns:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.updated_at))
        print(f"{c.name:<{width}}  {c.kind:<6} {c.status:<11} {counts[c.name]:>5}  {when}")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    from workbench.runners import runner_entry

    hosts = [h for h in args.hosts.split(",") if h]
    design = load_design(args.design)
    if args.inventory:
        kind = CampaignKind.LIVE
        runner_spec = {"inventory": str(Path(args.inventory).resolve())}
        extra: dict[str, Any] = {"holdout": args.holdout,
                                 "hosts": hosts or _inventory_hosts(args.inventory)}
    else:
        kind = CampaignKind.REPLAY
        runner_spec = from_args(ReplayOptions, args, path=args.replay).to_spec()
        if not Path(args.replay).is_file():
            raise ConfigError(f"no such file: {args.replay}")
        extra = {"hosts": hosts, "holdout": args.holdout}
    spec = {**runner_entry(kind).stored_spec(runner_spec), **extra, "submitted": True}
    with open_store(args.store) as store:
        store.create_campaign(args.name, kind, design=design, spec=spec, seed=args.seed,
                              status=CampaignStatus.QUEUED)
        print(f"queued {args.name} ({kind}) in {store.url}"
              + (f" for hosts {', '.join(spec['hosts'])}" if spec["hosts"] else ""))
    return 0


def _inventory_hosts(path: str) -> list[str]:
    from workbench.inventory import load_inventory

    inv = load_inventory(path)
    return [h.name for h in inv.hosts]
