"""``nimo model score|update|fit``: exported models and runs measured elsewhere.

* ``score MODEL.json runs.csv``: MAPE and median APE of the model's predictions of the runs
  (``--json OUT`` adds one record per run; ``-`` is stdout).
* ``update MODEL.json runs.csv -o NEW.json``: a linear-form family model with the runs added
  through its fixed-size sufficient statistics (equal to the batch fit of all runs).
* ``fit runs.csv --family F --attributes a,b -o MODEL.json``: a family model of the runs,
  cross-validated (its honest error and 90% interval) unless ``--no-cv``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import FileAccessError


def register(sub: Any) -> None:
    sc = sub.add_parser("score", help="score an exported model on runs measured elsewhere")
    sc.add_argument("model", metavar="MODEL.json")
    sc.add_argument("runs", metavar="runs.csv")
    sc.add_argument("--time-column", default="T", help="run-time column (default T)")
    sc.add_argument("--json", metavar="OUT.json", help="per-run records as JSON (- = stdout)")
    sc.set_defaults(func=cmd_score)
    up = sub.add_parser("update", help="add observed runs to a linear-form family model")
    up.add_argument("model", metavar="MODEL.json")
    up.add_argument("runs", metavar="runs.csv")
    up.add_argument("--time-column", default="T", help="run-time column (default T)")
    up.add_argument("-o", "--output", required=True, metavar="FILE", help="model.json to write")
    up.set_defaults(func=cmd_update)
    fit = sub.add_parser("fit", help="fit a model family on runs (a CSV) and export it")
    fit.add_argument("runs", metavar="runs.csv")
    fit.add_argument("--family", required=True, help="family name, or auto (honest choice)")
    fit.add_argument("--attributes", required=True, metavar="COL,...")
    fit.add_argument("--categorical", metavar="COL,...")
    fit.add_argument("--load", metavar="COL,...")
    fit.add_argument("--time-column", default="T", help="run-time column (default T)")
    fit.add_argument("--extrapolate-on", metavar="COL",
                     help="a numeric attribute the model will extrapolate in (a scale, as "
                     "nodes): the cross-validation predicts each of its largest levels from "
                     "the levels below, so the error and interval are those of extrapolating")
    fit.add_argument("--no-cv", dest="cv", action="store_false",
                     help="a named family: fit once, without the cross-validation that gives "
                     "its honest error and 90%% interval (one fit instead of up to 21)")
    fit.add_argument("-o", "--output", required=True, metavar="FILE", help="model.json to write")
    fit.set_defaults(func=cmd_fit)


def _names(text: str | None, flag: str, absent: str | None = "none") -> list[str]:
    """A comma-separated column list (None: the flag left out, none); an empty one refused."""
    from workbench.options import optional_names

    return list(optional_names(text, flag, absent) or ())


def _runs(n: int, more: str = "") -> str:
    """``1 run``, ``2 runs`` (``more``: a word before run, ``1 more run``)."""
    return f"{n} {more}run{'' if n == 1 else 's'}"


def _categorical(model: Any) -> tuple[str, ...]:
    encoder = getattr(model, "encoder", None)
    return tuple(encoder.categorical) if encoder is not None else ()


def cmd_score(args: argparse.Namespace) -> int:
    from nimo.model.family import interval_rows, load_any, predict_rows
    from workbench.model_runs import read_runs
    from workbench.replay_scale import ape_summary

    model = load_any(args.model)
    runs = read_runs(args.runs, model.names, _categorical(model), args.time_column)
    predicted = predict_rows(model, runs.rows)
    bounds = interval_rows(model, runs.rows, predicted)
    inside = [b[0] <= T <= b[1] for b, T in zip(bounds, runs.T, strict=True) if b is not None]
    summary = ape_summary(runs.T.tolist(), predicted)
    mape, median = summary["external_mape_pct"], summary["external_median_ape_pct"]
    held = (f", 90% interval held {sum(inside) / len(inside):.0%} ({sum(inside)} of "
            f"{_runs(len(inside))})" if inside else ", no 90% interval")
    print(f"{args.model} on {args.runs}: {_runs(len(runs.rows))}, MAPE "
          f"{'-' if mape is None else f'{mape:.2f}%'}, median APE "
          f"{'-' if median is None else f'{median:.2f}%'}{held}",
          file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        records = [{"line": line, **row, "T": float(T), "predicted": float(p),
                    "ape_pct": float(abs(p - T) / T * 100),
                    "lo": None if b is None else b[0], "hi": None if b is None else b[1]}
                   for line, row, T, p, b in zip(runs.lines, runs.rows, runs.T, predicted,
                                                 bounds, strict=True)]
        doc = {"model": args.model, "runs": args.runs, "mape_pct": mape,
               "median_ape_pct": median,
               "coverage_90": sum(inside) / len(inside) if inside else None,
               "records": records}
        _write(args.json, json.dumps(doc, indent=2) + "\n")
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    from nimo.model.family import load_any
    from workbench.model_runs import read_runs

    model = load_any(args.model)
    if not hasattr(model, "update"):
        from nimo.errors import ModelError

        raise ModelError(f"{args.model}: a planner cost model keeps no sufficient statistics",
                         hint="update a linear-form family model (nimo model fit --family "
                         "product|scaling|ernest|loglog2)")
    runs = read_runs(args.runs, model.names, _categorical(model), args.time_column)
    new = model.update(runs.rows, runs.T)
    _write(args.output, json.dumps(new.to_dict(), indent=2) + "\n")
    print(f"wrote {args.output}: {model.family} model with {_runs(len(runs.rows), 'more ')} "
          f"({new.training.get('runs')} in all)")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    from nimo.errors import DataError
    from nimo.families import choose_family, fit_family
    from nimo.families.model import check_family
    from workbench.model_runs import read_runs

    attrs = _fit_columns(args)
    runs = read_runs(args.runs, [*attrs["numeric"], *attrs["categorical"]],
                     attrs["categorical"], args.time_column)
    if len({tuple(sorted(r.items())) for r in runs.rows}) < 2:
        raise DataError(f"{args.runs}: every run holds the same assignment: nothing to fit",
                        hint="a model needs runs at 2 or more assignments")
    if args.family == "auto":
        from nimo.families import AUTO_CANDIDATES

        choice = choose_family(AUTO_CANDIDATES, runs.rows, runs.T, **attrs,
                               extrapolate_on=args.extrapolate_on)
        model = choice.model
        note = f" (chosen by {choice.method} cross-validation: {_ranking(choice.errors)})"
    elif args.cv:
        choice = choose_family((check_family(args.family, "--family"),), runs.rows, runs.T,
                               **attrs, extrapolate_on=args.extrapolate_on)
        model, error = choice.model, choice.errors[choice.family]
        note = (f" ({choice.method} cross-validated MAPE {error:.1f}%)" if error is not None
                else f" (its {choice.method} cross-validation failed: no interval)")
    else:
        model = fit_family(check_family(args.family, "--family"), runs.rows, runs.T, **attrs)
        note = ""
    _write(args.output, json.dumps(model.to_dict(), indent=2) + "\n")
    fitted = np.asarray(model.predict(runs.rows))
    print(f"wrote {args.output}: {model.family} model{note} of {len(runs.rows)} runs, "
          f"training MAPE {float(np.mean(np.abs(fitted - runs.T) / runs.T)) * 100:.2f}%")
    return 0


def _ranking(errors: Mapping[str, float | None], shown: int = 3) -> str:
    """``loglog2 5.1%, product 7.3%, knn 9.0%``: the candidates' fold errors, best first."""
    ranked = sorted((e, f) for f, e in errors.items() if e is not None)
    return ", ".join(f"{f} {e:.1f}%" for e, f in ranked[:shown]) or "no candidate scored"


def _fit_columns(args: argparse.Namespace) -> dict[str, Any]:
    """The numeric, categorical and load columns ``nimo model fit`` was given, checked: the
    run time is no attribute, and every categorical or load column is one of them."""
    from nimo.errors import ConfigError

    attributes = _names(args.attributes, "--attributes", None)
    if args.time_column in attributes:
        raise ConfigError(f"--attributes names the run-time column {args.time_column!r} "
                          "(--time-column): a model cannot take the time it predicts",
                          hint="name the attribute columns only")
    categorical, load = _names(args.categorical, "--categorical"), _names(args.load, "--load")
    numeric = [a for a in attributes if a not in categorical]
    for flag, names, valid in (("--categorical", categorical, attributes),
                               ("--load", load, numeric)):
        for name in names:
            if name not in valid:
                raise ConfigError(f"{flag} column {name!r} is not among the "
                                  f"{'numeric ' if flag == '--load' else ''}--attributes",
                                  hint="valid: " + ", ".join(valid))
    if args.extrapolate_on is not None and args.extrapolate_on not in numeric:
        raise ConfigError(f"--extrapolate-on column {args.extrapolate_on!r} is not among the "
                          "numeric --attributes", hint="valid: " + ", ".join(numeric))
    if args.extrapolate_on is not None and not args.cv:
        raise ConfigError("--extrapolate-on shapes the cross-validation, which --no-cv skips",
                          hint="leave out one of them")
    return {"numeric": numeric, "categorical": categorical, "load": load}


def _write(path: str, text: str) -> None:
    if path == "-":
        print(text, end="")
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
