"""``nimo serve``: run queued campaigns (``nimo campaign submit``) as their hosts free up."""

from __future__ import annotations

import argparse
import logging
import math
import sys
from typing import Any

from nimo.errors import ConfigError

DEFAULT_STORE = "sqlite:///./nimo.db"


def finite_float(text: str) -> float:
    """A finite number (argparse ``type``): NaN and infinity are no poll or remeasure time."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="run queued campaigns; hosts never shared")
    p.add_argument("--store", metavar="URL", default=None,
                   help="campaign store (default $NIMO_STORE_URL or "
                        f"{DEFAULT_STORE})")
    p.add_argument("--poll", type=finite_float, default=2.0, metavar="S",
                   help="seconds between looks at the queue (default 2)")
    p.add_argument("--workers", type=int, default=4, metavar="N",
                   help="campaigns run at once at most (default 4)")
    p.add_argument("--retries", type=int, default=1, metavar="N",
                   help="times a failed run is run again before it counts as failed")
    p.add_argument("--remeasure-hours", type=finite_float, default=None, metavar="H",
                   help="re-measure live inventories' resource profiles every H hours")
    p.add_argument("--until-idle", action="store_true",
                   help="exit once nothing is queued or running")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from nimo.errors import interrupt_reason
    from workbench.exitstatus import interrupted_status, signals_interrupt, stacks_on_sigusr1
    from workbench.service import Service, serve_forever

    stacks_on_sigusr1()

    if args.poll <= 0 or args.workers < 1 or args.retries < 0:
        raise ConfigError("--poll must be > 0, --workers >= 1 and --retries >= 0")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    service = Service(
        args.store, poll_s=args.poll, workers=args.workers, run_attempts=args.retries + 1,
        remeasure_s=args.remeasure_hours * 3600 if args.remeasure_hours else None,
    )
    try:
        with signals_interrupt():  # SIGTERM/SIGHUP stop it as Ctrl-C does
            serve_forever(service, until_idle=args.until_idle)
    except KeyboardInterrupt as e:
        logging.getLogger("nimo.serve").info("stopped (%s)", interrupt_reason(e))
        print(f"nimo serve: stopped ({interrupt_reason(e)}); running campaigns were torn down "
              "and queued again", file=sys.stderr)
        return interrupted_status(e)
    if service.failed:  # --until-idle: the queue ran out; say so if campaigns failed
        names = ", ".join(f"{n} ({why})" for n, why in sorted(service.failed.items()))
        print(f"nimo serve: {len(service.failed)} campaign(s) failed: {names}", file=sys.stderr)
        return 3
    return 0
