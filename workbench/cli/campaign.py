"""``nimo campaign run|resume|status|log|samples|list|submit|delete``: campaigns people can
run, leave, resume and hand to the service.

``run`` and ``resume`` exit with the statuses of ``workbench.exitstatus`` (0 only when the
campaign ended by its stop rule with a model); the read-only actions live in
``workbench.cli.campaign_show``. Heavy modules (the store, the executor) are imported when an
action runs, never when the parser is built.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nimo.errors import ConfigError
from workbench.cli import campaign_show as show

DEFAULT_STORE = "sqlite:///./nimo.db"


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
    res.add_argument("--new", metavar="NEW_NAME", help="live: start a new campaign NEW_NAME "
                     "with NAME's design, seed and holdout on the inventory as it is now "
                     "(when the inventory changed what a sample means, resume refuses)")
    _output_options(res)
    res.set_defaults(func=cmd_resume)

    show.register(sub, _store_option)

    dl = sub.add_parser("delete", help="delete a campaign and everything stored with it")
    dl.add_argument("name", metavar="NAME")
    dl.add_argument("--force", action="store_true",
                    help="also when the store says it is running (its process is gone)")
    _store_option(dl)
    dl.set_defaults(func=cmd_delete)

    _register_submit(sub)


def _register_submit(sub: Any) -> None:
    from workbench.options import add_flags
    from workbench.replay import ReplayOptions

    sb = sub.add_parser("submit", help="queue a campaign for `nimo serve`")
    sb.add_argument("name", metavar="NAME")
    src = sb.add_mutually_exclusive_group(required=True)
    src.add_argument("--inventory", metavar="INVENTORY.yaml", help="a live campaign")
    src.add_argument("--replay", metavar="DATA.csv", help="a replay campaign")
    add_flags(sb, ReplayOptions, help_prefix="replay: ", skip=("seed",))
    sb.add_argument("--hosts", metavar="H1,H2",
                    help="hosts the campaign needs (live: default all of the inventory)")
    sb.add_argument("--holdout", type=int, default=0, metavar="N")
    _design_options(sb)
    _store_option(sb)
    sb.set_defaults(func=cmd_submit)


def _store_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="URL", default=None,
                   help=f"campaign store (default $NIMO_STORE_URL or {DEFAULT_STORE})")


def _output_options(p: argparse.ArgumentParser) -> None:
    _store_option(p)
    p.add_argument("--json", metavar="OUT", help="write the result document, rewritten after "
                   "every run (- for stdout at the end)")
    p.add_argument("--quiet", action="store_true", help="no live progress table")
    p.add_argument("--skip-doctor", action="store_true",
                   help="live campaigns: do not check the hosts first (`nimo doctor`)")


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
    from nimo.records.campaigns import check_campaign_name
    from workbench.campaigns import check_json_target, launch_live

    if args.holdout < 0:
        raise ConfigError("--holdout must be >= 0")
    check_json_target(args.json)
    design = load_design(args.design)
    name = (check_campaign_name(args.name) if args.name is not None
            else f"live-{time.strftime('%Y%m%d-%H%M%S')}")
    return run_campaign(lambda: launch_live(
        args.inventory, design=design, seed=args.seed, holdout=args.holdout,
        store_url=args.store, name=name, json_out=args.json, progress=not args.quiet,
        doctor=not args.skip_doctor), name, summary)


def cmd_resume(args: argparse.Namespace) -> int:
    from nimo.records.campaigns import check_campaign_name
    from workbench.campaigns import launch_live, resume

    if args.new:
        check_campaign_name(args.new)
        info = _stored(args.store, args.name)
        if info.kind != "live":
            raise ConfigError(f"--new: campaign {args.name!r} is a {info.kind} campaign",
                              hint="valid: live campaigns")
        return run_campaign(lambda: launch_live(
            info.spec["inventory"], design=info.design, seed=info.seed,
            holdout=int(info.spec.get("holdout") or 0), store_url=args.store, name=args.new,
            json_out=args.json, progress=not args.quiet, doctor=not args.skip_doctor),
            args.new, summary)
    return run_campaign(lambda: resume(
        args.name, store_url=args.store, json_out=args.json, progress=not args.quiet,
        doctor=not args.skip_doctor), args.name, summary)


Summarize = Callable[[dict[str, Any], Any], None]


def run_campaign(call: Callable[[], Any], name: str | None, summarize: Summarize,
                 command: str = "campaign") -> int:
    """Run ``call`` (a campaign), print its summary and return its exit status
    (``workbench.exitstatus``): SIGTERM/SIGHUP interrupt it like Ctrl-C."""
    from nimo.errors import interrupt_reason
    from workbench.executor.stops import FailureBudgetExceeded
    from workbench.exitstatus import (
        Exit,
        interrupted_status,
        interrupts_deferred,
        signals_interrupt,
        stacks_on_sigusr1,
        verdict,
    )
    from workbench.ownership import Busy

    stacks_on_sigusr1()
    try:
        with signals_interrupt():
            result = call()
    except Busy as e:
        print(f"nimo {command}: busy: {e}", file=sys.stderr)
        return int(Exit.BUSY)
    except KeyboardInterrupt as e:
        again = f"; continue with `nimo campaign resume {name}`" if name else ""
        print(f"nimo: campaign {name or ''} interrupted ({interrupt_reason(e)}){again}",
              file=sys.stderr)
        return interrupted_status(e)
    except FailureBudgetExceeded as e:
        print(f"nimo: campaign {name} FAILED: runs failed beyond policy: {e}", file=sys.stderr)
        return int(Exit.RUNS_FAILED)
    with interrupts_deferred(reraise=False):  # done and stored: a late Ctrl-C cuts nothing
        doc = result.to_dict()
        judged = verdict(doc)
        summarize(doc, judged)
    return int(judged.status)


def summary(doc: dict[str, Any], judged: Any) -> None:
    """The campaign's summary: failures first, then what ended it and its figures, then
    warnings (knobs never measured, levels beyond the training runs)."""
    from workbench.cli.progress import format_duration
    from workbench.exitstatus import stop_kind

    final = doc["final"]
    for problem in judged.problems:
        print(f"{doc['name']}: {problem}")
    reason = doc["stopped_because"] or "-"
    parts = [f"{doc['name']}: stopped by {stop_kind(reason)} ({reason})",
             f"runs {final['runs']}", f"learning time {format_duration(final['acquisition_s'])}"]
    batch = (doc.get("design") or {}).get("batch") or 1
    if batch > 1:
        parts.append(f"batch {batch}")
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
    family = final.get("family") or {}
    if family:
        print(f"{doc['name']}: {show.family_line(family)}")
    for warning in judged.warnings:
        print(f"{doc['name']}: warning: {warning}")


def cmd_submit(args: argparse.Namespace) -> int:
    from nimo.campaign import design_to_dict, with_batch
    from nimo.records import CampaignKind, CampaignStatus
    from nimo.records.campaigns import check_campaign_name
    from nimo.store import open_store
    from nimo.store.urls import refuse_in_memory
    from workbench.options import from_args, name_list
    from workbench.replay import ReplayOptions
    from workbench.runners import live_spec, runner_entry

    check_campaign_name(args.name)
    hosts = [] if args.hosts is None else list(
        name_list(args.hosts, "--hosts", "all of the inventory (live) or none (replay)"))
    design = load_design(args.design)
    if args.inventory:
        kind = CampaignKind.LIVE
        runner_spec, inventory_hosts, concurrency = live_spec(args.inventory)
        unknown = [h for h in hosts if h not in inventory_hosts]
        if unknown:
            raise ConfigError(f"--hosts: {', '.join(unknown)} not in {args.inventory}",
                              hint=f"valid: {', '.join(inventory_hosts)}")
        from workbench.fingerprint import SPEC_KEY, meaning_of_file

        extra: dict[str, Any] = {"holdout": args.holdout, "hosts": hosts or inventory_hosts,
                                 SPEC_KEY: meaning_of_file(args.inventory)}
    else:
        kind = CampaignKind.REPLAY
        runner_spec = from_args(ReplayOptions, args, path=args.replay).to_spec()
        if not Path(args.replay).is_file():
            raise ConfigError(f"no such file: {args.replay}")
        extra = {"hosts": hosts, "holdout": args.holdout}
        concurrency = 1  # replay runs one at a time
    spec = {**runner_entry(kind).stored_spec(runner_spec), **extra, "submitted": True}
    refuse_in_memory(args.store)  # `nimo serve` reads the queue from another process
    with open_store(args.store) as store:
        design = design_to_dict(with_batch(design, concurrency))  # fixed now, for resume
        store.create_campaign(args.name, kind, design=design, spec=spec, seed=args.seed,
                              status=CampaignStatus.QUEUED)
        print(f"queued {args.name} ({kind}) in {store.url}"
              + (f" for hosts {', '.join(spec['hosts'])}" if spec["hosts"] else ""))
    return 0


def _stored(url: str | None, name: str) -> Any:
    from nimo.store import open_store

    with open_store(url, create=False) as store:
        return store.campaign(name)


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete a campaign (runs, samples, log, models, leases); refuses one a live process
    runs (one killed, or on a lost machine, is deleted as ``status`` calls it orphaned)."""
    import time

    from nimo.errors import StoreError
    from nimo.store import open_store
    from workbench.ownership import owner_gone

    with open_store(args.store, create=False) as store:
        info = store.campaign(args.name)
        owner = store.campaign_owner(args.name)
        if not owner_gone(owner, time.time()) and not args.force:
            who = f" (run by {owner.describe()})" if owner is not None else ""
            raise StoreError(f"campaign {args.name!r} is {info.status}{who}; not deleted",
                             hint="stop it first, or pass --force if that process is gone")
        n = store.delete_campaign(args.name)
        print(f"deleted {args.name} ({info.kind}, {info.status}, {n} runs) from {store.url}")
    return 0
