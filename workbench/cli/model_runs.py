"""``nimo model score|update|fit``: exported models and runs measured elsewhere.

* ``score MODEL.json runs.csv``: MAPE and median APE of the model's predictions of the runs
  (``--json OUT`` adds one record per run; ``-`` is stdout).
* ``update MODEL.json runs.csv -o NEW.json``: a linear-form family model with the runs added
  through its fixed-size sufficient statistics (equal to the batch fit of all runs).
* ``fit runs.csv --family F --attributes a,b -o MODEL.json``: a family model of the runs.
"""

from __future__ import annotations

import argparse
import json
import sys
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
    fit.add_argument("-o", "--output", required=True, metavar="FILE", help="model.json to write")
    fit.set_defaults(func=cmd_fit)


def _names(text: str | None, flag: str, absent: str | None = "none") -> list[str]:
    """A comma-separated column list (None: the flag left out, none); an empty one refused."""
    from workbench.options import name_list

    return [] if text is None else list(name_list(text, flag, absent))


def _categorical(model: Any) -> tuple[str, ...]:
    encoder = getattr(model, "encoder", None)
    return tuple(encoder.categorical) if encoder is not None else ()


def cmd_score(args: argparse.Namespace) -> int:
    from nimo.model.family import load_any, predict_rows
    from workbench.model_runs import read_runs
    from workbench.replay_scale import ape_summary

    model = load_any(args.model)
    runs = read_runs(args.runs, model.names, _categorical(model), args.time_column)
    predicted = predict_rows(model, runs.rows)
    summary = ape_summary(runs.T.tolist(), predicted)
    mape, median = summary["external_mape_pct"], summary["external_median_ape_pct"]
    print(f"{args.model} on {args.runs}: {len(runs.rows)} runs, MAPE "
          f"{'-' if mape is None else f'{mape:.2f}%'}, median APE "
          f"{'-' if median is None else f'{median:.2f}%'}", file=sys.stderr if args.json == "-"
          else sys.stdout)
    if args.json:
        records = [{"line": line, **row, "T": float(T), "predicted": float(p),
                    "ape_pct": float(abs(p - T) / T * 100)}
                   for line, row, T, p in zip(runs.lines, runs.rows, runs.T, predicted,
                                              strict=True)]
        doc = {"model": args.model, "runs": args.runs, "mape_pct": mape,
               "median_ape_pct": median, "records": records}
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
    print(f"wrote {args.output}: {model.family} model with {len(runs.rows)} more runs "
          f"({new.training.get('runs')} in all)")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    from nimo.errors import DataError
    from nimo.families import choose_family, fit_family
    from nimo.families.model import check_family
    from workbench.model_runs import read_runs

    categorical = _names(args.categorical, "--categorical")
    numeric = [a for a in _names(args.attributes, "--attributes", None) if a not in categorical]
    runs = read_runs(args.runs, [*numeric, *categorical], categorical, args.time_column)
    if len({tuple(sorted(r.items())) for r in runs.rows}) < 2:
        raise DataError(f"{args.runs}: every run holds the same assignment: nothing to fit",
                        hint="a model needs runs at 2 or more assignments")
    attrs: dict[str, Any] = {"numeric": numeric, "categorical": categorical,
                             "load": _names(args.load, "--load")}
    if args.family == "auto":
        from nimo.families import AUTO_CANDIDATES

        choice = choose_family(AUTO_CANDIDATES, runs.rows, runs.T, **attrs)
        model, note = choice.model, f" (chosen by {choice.method})"
    else:
        model = fit_family(check_family(args.family, "--family"), runs.rows, runs.T, **attrs)
        note = ""
    _write(args.output, json.dumps(model.to_dict(), indent=2) + "\n")
    fitted = np.asarray(model.predict(runs.rows))
    print(f"wrote {args.output}: {model.family} model{note} of {len(runs.rows)} runs, "
          f"training MAPE {float(np.mean(np.abs(fitted - runs.T) / runs.T)) * 100:.2f}%")
    return 0


def _write(path: str, text: str) -> None:
    if path == "-":
        print(text, end="")
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
