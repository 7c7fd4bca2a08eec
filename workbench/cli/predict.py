"""``nimo predict MODEL.json attr=value ...``: predicted T with its interval."""

from __future__ import annotations

import argparse

from nimo.errors import ConfigError
from nimo.model import load_model
from nimo.model.cost import CALIBRATION_SOURCES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("predict", help="predict run time from an exported cost model")
    p.add_argument("model", metavar="MODEL.json")
    p.add_argument("values", nargs="*", metavar="attr=value")
    p.add_argument("--level", type=float, default=0.90, help="interval level (default 0.90)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    assignment: dict[str, float] = {}
    for item in args.values:
        name, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"expected attr=value, got {item!r}",
                              hint="attributes: " + ", ".join(model.names))
        if name not in model.names:
            raise ConfigError(f"unknown attribute {name!r}",
                              hint="valid: " + ", ".join(model.names))
        try:
            assignment[name] = float(text)
        except ValueError:
            raise ConfigError(f"{name}: not a number: {text!r}") from None
    missing = [n for n in model.names if n not in assignment]
    if missing:
        raise ConfigError(f"missing value for {', '.join(missing)}",
                          hint="give every attribute: " + " ".join(f"{n}=..." for n in model.names))
    if not 0.0 < args.level < 1.0:
        raise ConfigError(f"--level must lie in (0, 1) (got {args.level})")
    p = model.predict_interval(assignment, level=args.level)
    cal = model.calibration
    source = CALIBRATION_SOURCES.get(cal.get("method", ""), cal.get("method", "?"))
    how = f"; calibrated on {len(cal['z'])} {source} residuals" if cal.get("z") else ""
    print(f"T = {p.mean:.4g} s  ({args.level:.0%} interval {p.lo:.4g} .. {p.hi:.4g} s{how})")
    return 0
