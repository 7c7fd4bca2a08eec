"""``nimo campaign status|log|list|samples``: read a store, never change it (nor create one).

Each prints a table, or with ``--format json`` one JSON document on stdout, for scripts.
``samples -o FILE`` writes CSV (``.csv``, or stdout for ``-``) or Parquet (``.parquet``, with
pyarrow or pandas installed); any other extension is refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nimo.errors import ConfigError
from nimo.finite import finite_document


def register(sub: Any, store_option: Callable[[argparse.ArgumentParser], None]) -> None:
    st = sub.add_parser("status", help="state, runs and errors of a campaign")
    st.add_argument("name", metavar="NAME")
    _common(st, store_option)
    st.set_defaults(func=cmd_status)

    lg = sub.add_parser("log", help="convergence log of a campaign")
    lg.add_argument("name", metavar="NAME")
    _common(lg, store_option)
    lg.set_defaults(func=cmd_log)

    sm = sub.add_parser("samples", help="a campaign's measured samples as a replay CSV "
                        "(or Parquet)")
    sm.add_argument("name", metavar="NAME")
    sm.add_argument("-o", "--output", default="-", metavar="OUT.csv|OUT.parquet",
                    help="where to write them, format by extension (default: CSV on stdout)")
    sm.add_argument("--profile", action="store_true",
                    help="add the measured resource and dataset profiles as profile_* "
                    "columns (model inputs for `nimo model fit`)")
    store_option(sm)
    sm.set_defaults(func=cmd_samples)

    ls = sub.add_parser("list", help="campaigns in the store")
    _common(ls, store_option)
    ls.set_defaults(func=cmd_list)


def _common(p: argparse.ArgumentParser,
            store_option: Callable[[argparse.ArgumentParser], None]) -> None:
    store_option(p)
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="table (default) or one JSON document")


def _open(url: str | None) -> Any:
    from nimo.store import open_store

    return open_store(url, create=False)


def _dump(doc: Any) -> None:
    print(json.dumps(finite_document(doc), indent=2, allow_nan=False))



# -- status --------------------------------------------------------------------------------
def status_doc(store: Any, name: str) -> dict[str, Any]:
    """Everything ``status`` shows, as a JSON-able mapping."""
    from nimo.records import RunPurpose, RunStatus
    from workbench.exitstatus import model_warnings

    info = store.campaign(name)
    runs = store.runs(name)
    iterations = store.iterations(name)
    last = iterations[-1] if iterations else None
    holdout = [r for r in runs if r.purpose is RunPurpose.HOLDOUT]
    failed = [r for r in runs if r.status is RunStatus.FAILED]  # not the interrupted ones
    finished = [{"assignment": r.assignment, "purpose": str(r.purpose),
                 "status": "done" if r.status is RunStatus.DONE else "failed"}
                for r in runs if r.final]
    models = store.models(name)
    return {
        "name": info.name, "kind": str(info.kind), "seed": info.seed,
        "design": {"name": info.design.get("name"), "batch": info.design.get("batch") or 1},
        "status": str(info.status), "stopped_because": info.stopped_because,
        "orphaned": orphaned(store, info),
        "runs": dict(sorted(Counter(str(r.status) for r in runs).items())),
        "samples": sum(r.sample is not None for r in runs),
        "learning_s": last.acquisition_s if last else None,
        "last_run": last.run if last else None,
        **latest_errors(last, info.spec.get("final_result")),
        "models": len(models),
        "holdout": {"asked": info.spec.get("holdout") or len(holdout),
                    "done": sum(r.status is RunStatus.DONE for r in holdout),
                    **(info.spec.get("holdout_result") or {})} if holdout or
        info.spec.get("holdout") else None,
        "in_flight": [r.run for r in runs if r.status is RunStatus.QUEUED],
        "failed": [{"run": r.run, "reason": r.reason} for r in failed],
        "hosts": list(info.spec.get("hosts") or []),
        "leased": [lease.host for lease in store.leases() if lease.campaign == name],
        "warnings": list(model_warnings(models[-1].model if models else None, finished)),
        "family": {k: v for k, v in (info.spec.get("family_result") or {}).items()
                   if k != "model"} or None,
    }


def orphaned(store: Any, info: Any) -> bool:
    """True when the store says the campaign is in progress but no live process runs it
    (killed, or its machine lost): resume continues it."""
    from workbench.ownership import owner_gone

    return bool(info.status.active) and owner_gone(store.campaign_owner(info.name),
                                                   time.time())


ORPHANED = ("no live process runs it (killed, or its machine lost); "
            "`nimo campaign resume {name}` continues it")


def latest_errors(last: Any, final: Any) -> dict[str, Any]:
    """The internal and external error of the latest model: the one handed over
    (``final_result``, refitted at the stop) when it followed the last run, else the model
    after the last run."""
    keys = ("internal_error_pct", "external_mape_pct")
    if last is not None and isinstance(final, Mapping) and final.get("run") == last.run:
        return {k: final.get(k) for k in keys}
    return {k: getattr(last, k) if last is not None else None for k in keys}


def cmd_status(args: argparse.Namespace) -> int:
    with _open(args.store) as store:
        doc = status_doc(store, args.name)
    if args.format == "json":
        _dump(doc)
        return 0
    for line in status_lines(doc):
        print(line)
    return 0


def status_lines(d: Mapping[str, Any]) -> list[str]:
    from workbench.cli.progress import format_duration, format_pct

    lines = [f"campaign  {d['name']} ({d['kind']}, seed {d['seed']})",
             f"status    {d['status']}" + (f" - {d['stopped_because']}"
                                          if d["stopped_because"] else "")
             + (" - " + ORPHANED.format(name=d["name"]) if d.get("orphaned") else ""),
             f"design    {d['design']['name']}, {batch_words(d['design']['batch'])}",
             "runs      " + (", ".join(f"{k} {v}" for k, v in d["runs"].items()) or "none"),
             f"samples   {d['samples']}"]
    if d["last_run"] is not None:
        lines.append(f"learning  {format_duration(d['learning_s'])} after run {d['last_run']}")
        lines.append(f"errors    internal {format_pct(d['internal_error_pct'])}, "
                     f"external {format_pct(d['external_mape_pct'])}")
    lines.append(f"models    {d['models']} version(s)")
    if d["holdout"]:
        lines.append(_holdout_line(d["holdout"]))
    if d["in_flight"]:
        lines.append(f"in flight {', '.join(map(str, d['in_flight']))}")
    lines += [f"failed    run {f['run']}: {f['reason']}" for f in d["failed"][-5:]]
    if d["hosts"]:
        leased = f" (leased: {', '.join(d['leased'])})" if d["leased"] else ""
        lines.append(f"hosts     {', '.join(d['hosts'])}{leased}")
    if d.get("family"):
        lines.append(f"family    {family_line(d['family'])}")
    lines += [f"warning   {w}" for w in d["warnings"]]
    return lines


def batch_words(batch: int) -> str:
    """How many training runs the planner asks at once, in words."""
    return ("one training run per ask" if batch == 1
            else f"batch {batch} (up to {batch} training runs in flight)")


def family_line(family: dict[str, Any]) -> str:
    """``final.family`` in one line: the family, how chosen, its honest and holdout errors."""
    if family.get("error"):
        return f"family {family.get('name', '-')}: not fitted: {family['error']}"
    honest = (family.get("honest_error_pct") or {}).get(family["name"])
    parts = [f"family {family['name']} (chosen by {family['chosen_by']}) on "
             f"{family['training_runs']} runs",
             f"honest error {'-' if honest is None else f'{honest:.1f}%'}"]
    for key, label in (("holdout_mape_pct", "holdout MAPE"),
                       ("holdout_median_ape_pct", "median APE")):
        if family.get(key) is not None:
            parts.append(f"{label} {family[key]:.1f}%")
    if family.get("holdout_coverage_90") is not None:
        parts.append(f"90% interval held {family['holdout_coverage_90']:.0%}")
    if family.get("holdout_error"):
        parts.append(f"holdout not scored: {family['holdout_error']}")
    return ", ".join(parts) + "; export: nimo model export NAME --family -o FILE"


def _holdout_line(h: Mapping[str, Any]) -> str:
    line = f"holdout   {h['done']}/{h['asked']} runs done"
    if h.get("holdout_failed"):
        line += f", {h['holdout_failed']} FAILED (figures cover the others only)"
    if h.get("holdout_mape_pct") is not None:
        line += f", MAPE {h['holdout_mape_pct']:.1f}%"
    if h.get("holdout_coverage_90") is not None:
        line += f", {h['holdout_coverage_90']:.0%} inside 90% interval"
    if h.get("holdout_shift_pct") is not None:
        line += f", median off the model {h['holdout_shift_pct']:+.0f}%"
    if h.get("recheck_drift_pct") is not None:
        line += f", reference re-run last {h['recheck_drift_pct']:+.0f}%"
    if h.get("overhead_s_per_run") is not None:
        line += f", overhead {h['overhead_s_per_run']:.2f}s/run"
    return line


# -- log and list --------------------------------------------------------------------------
def cmd_log(args: argparse.Namespace) -> int:
    from workbench.cli.progress import format_record
    from workbench.replay_categories import named

    with _open(args.store) as store:
        # one line naming the known ones if there is none
        categories = stored_categories(store.campaign(args.name))
        iterations = store.iterations(args.name)
    if args.format == "json":
        _dump([{**rec.to_dict(), "assignment": named(rec.assignment, categories)}
               for rec in iterations])
        return 0
    if not iterations:
        print(f"{args.name}: no runs told yet")
        return 0
    print(f"{'run':>4}  {'purpose':<9} {'predictor':<12} {'learning':>9}  {'internal':>8}  "
          f"{'external':>8}  assignment  [attributes]")
    for rec in iterations:
        attrs = "; ".join(f"{p}: {','.join(a) or '-'}" for p, a in rec.attributes.items())
        status = "" if rec.status == "done" else f"  {rec.status.upper()}: {rec.reason}"
        print(f"{format_record(rec, categories)}  [{attrs}]{status}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with _open(args.store) as store:
        campaigns = store.campaigns()
        # every stored run, in flight or interrupted too: the total of `status`'s runs line
        counts = {c.name: len(store.runs(c.name)) for c in campaigns}
        lost = {c.name for c in campaigns if orphaned(store, c)}
        url = store.url
    if args.format == "json":
        _dump([{"name": c.name, "kind": str(c.kind), "status": str(c.status),
                "orphaned": c.name in lost,
                "runs": counts[c.name], "seed": c.seed, "stopped_because": c.stopped_because,
                "created_at": c.created_at, "updated_at": c.updated_at} for c in campaigns])
        return 0
    if not campaigns:
        print(f"no campaigns in {url}")
        return 0
    width = max(4, *(len(c.name) for c in campaigns))
    print(f"{'name':<{width}}  {'kind':<6} {'status':<11} {'runs':>5}  updated")
    for c in campaigns:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.updated_at))
        shown = f"{c.status}*" if c.name in lost else str(c.status)
        print(f"{c.name:<{width}}  {c.kind:<6} {shown:<11} {counts[c.name]:>5}  {when}")
    if lost:
        print("* " + ORPHANED.format(name="NAME"))
    return 0


# -- samples -------------------------------------------------------------------------------
def cmd_samples(args: argparse.Namespace) -> int:
    """Every done run (training, test and holdout) in `nimo replay`'s CSV format, so a live
    campaign becomes a dataset that replays answer from; Parquet by extension."""
    out = str(args.output)
    suffix = Path(out).suffix.lower()
    if out != "-" and suffix not in (".csv", ".parquet"):
        raise ConfigError(f"-o {out}: unknown format {suffix or '(no extension)'}",
                          hint="valid: .csv, .parquet (or - for CSV on stdout)")
    with _open(args.store) as store:
        categories = stored_categories(store.campaign(args.name))
        runs = [r for r in store.runs(args.name) if r.sample is not None]
    if not runs:
        raise ConfigError(f"campaign {args.name!r} has no measured samples yet")
    header, rows = sample_table(runs, categories)
    if getattr(args, "profile", False):
        from workbench.profile_columns import add_profile_columns

        header, rows = add_profile_columns(header, rows, runs)
    if suffix == ".parquet":
        write_parquet(out, header, rows)
    else:
        write_csv(out, header, rows)
    if out != "-":
        print(f"wrote {out}: {len(runs)} samples of {args.name}")
    return 0


def stored_categories(info: Any) -> dict[str, list[str]]:
    """A live campaign's categorical knobs ``{name: [categories]}`` (level k = item k-1)."""
    return dict(info.spec.get("categories") or {})


def sample_table(runs: list[Any], categories: Mapping[str, Sequence[str]] | None = None,
                 ) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows (numbers, category names, or None where a value is
    unknown). A measured column no run holds (D, U, o_* of a campaign that records T only)
    is left out, so the table replays as it reads (`nimo replay` refuses an empty cell)."""
    from workbench.replay import METADATA, RESERVED
    from workbench.replay_categories import named

    names = list(runs[0].assignment)
    measured = [c for c in RESERVED
                if c == "T" or any(getattr(r.sample, c) is not None for r in runs)]
    rows = []
    for r in runs:
        s = r.sample
        levels = named({n: float(r.assignment[n]) for n in names}, categories or {})
        rows.append([*(levels[n] for n in names),
                     *(None if getattr(s, c) is None else float(getattr(s, c))
                       for c in measured),
                     r.run, str(r.purpose), r.host or "", round(float(s.cost_s), 3)])
    return [*names, *measured, *METADATA], rows


def write_csv(out: str, header: list[str], rows: list[list[Any]]) -> None:
    import csv
    import io

    def cell(v: Any) -> str:
        if v is None:
            return ""
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows([[cell(v) for v in row] for row in rows])
    if out == "-":
        sys.stdout.write(buf.getvalue())
        return
    _write(Path(out), lambda p: p.write_text(buf.getvalue(), encoding="utf-8"))


def write_parquet(out: str, header: list[str], rows: list[list[Any]]) -> None:
    columns = {h: [row[i] for row in rows] for i, h in enumerate(header)}
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        _write(Path(out), lambda p: pq.write_table(pa.table(columns), str(p)))
        return
    except ModuleNotFoundError:
        pass
    try:
        import pandas as pd

        _write(Path(out), lambda p: pd.DataFrame(columns).to_parquet(p))
    except ImportError as e:
        raise ConfigError(f"-o {out}: writing Parquet needs pyarrow ({e})",
                          hint="pip install 'nimo-workbench[parquet]' (pyarrow), or "
                          "write .csv") from None


def _write(path: Path, write: Callable[[Path], Any]) -> None:
    from nimo.errors import FileAccessError

    try:
        write(path)
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
