"""``nimo design pb --factors N [--foldover]``: print a Plackett-Burman design as CSV."""

from __future__ import annotations

import argparse

from nimo.doe import foldover, pb_design


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("design", help="experiment designs (Plackett-Burman)")
    dsub = p.add_subparsers(dest="design_command", metavar="KIND")
    dsub.required = True
    pb = dsub.add_parser("pb", help="print a Plackett-Burman design matrix as CSV")
    pb.add_argument("--factors", type=int, required=True, metavar="N")
    pb.add_argument("--foldover", action="store_true", help="append the negated rows")
    pb.set_defaults(func=run_pb)


def run_pb(args: argparse.Namespace) -> int:
    design = pb_design(args.factors)
    if args.foldover:
        design = foldover(design)
    print(",".join(f"X{i + 1}" for i in range(args.factors)))
    for row in design:
        print(",".join(f"{int(v):+d}" for v in row))
    return 0
