"""Replay designs on a benchmark suite and print issue 9's acceptance figures.

    PYTHONPATH=. python3 -m benchmarks.learning.evaluate evaluation --apps 20 --seeds 1,2 \
        [--designs recommended,baseline-random] [--workers 2] [--out results.json]
    PYTHONPATH=. python3 -m benchmarks.learning.evaluate scout --seeds 1,2
    PYTHONPATH=. python3 -m benchmarks.learning.evaluate bell

Each campaign is one ``nimo replay`` through the real CLI (``workbench.cli.main``, in a pool of
at most 2 worker processes) on a copy of the case's CSV without a *judge set* of assignments,
which neither training nor the internal or external test set ever sees and which alone scores
the model's 90% interval. Judge and external sets depend on (case, seed) only.

Figures printed (medians over campaigns = (case, seed) pairs unless said otherwise):

- generated suites (tuning | evaluation): the share of (app, seed) where the design reaches AND
  keeps external MAPE <= 10% (every later iteration and the final model) after at most 2% of
  the all-samples learning time; the median runs to reach-and-keep (never reached counts as
  infinite) and its ratio to the random baseline's; a learning curve: median external MAPE at
  0.25/0.5/1/2/5/10% of the all-samples time (a campaign that stopped earlier counts with the
  model it delivered; one without any run within the budget counts as infinite);
- real and small suites (scout | bell | tuning-small | evaluation-small): median external MAPE
  after 10/20/30% of the configurations were measured, per design and for scikit-learn's
  GradientBoostingRegressor fitted on as many random configurations (one measured run each,
  same external test set; default hyper-parameters). A campaign that stopped before the mark
  counts with the model it delivered (the count is printed);
- honesty (all suites): at stop, external MAPE / the campaign's last internal error (median,
  share > 2); coverage: the share of the judge runs (every recorded repeat) inside the final
  model's 90% interval (pooled, and median per campaign; a NaN interval is a miss);
- time per campaign (wall, in the worker) and the total wall time.
``--out`` writes every campaign's record (iteration trace, metrics) and the summary as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.learning.metrics import (  # noqa: E402  (re-exported for tests)
    CONFIG_FRACTIONS,
    GBR,
    LEVEL,
    RANDOM,
    TARGET_PCT,
    TIME_FRACTIONS,
    Point,
    honesty_ratio,
    interval_hits,
    mape_after_runs,
    mape_at_budget,
    reach_and_keep,
    reached_within,
)
from benchmarks.learning.report import progress_line, report, summarize  # noqa: E402
from benchmarks.learning.space import (  # noqa: E402
    SpaceError,
    observing,
    space_coverage,
    space_scores,
    whole_space,
)
from benchmarks.learning.suites import GENERATED, SUITES, Case, load_suite  # noqa: E402

# --------------------------------------------------------------------------- one campaign

@dataclass(frozen=True)
class Job:
    case: Case
    design: str
    seed: int
    judge: int
    external: int
    calibration: int = 0  # --calibration-split of the replay (0: the model's own LOO)


def read_case(path: Path, attributes: Sequence[str]) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as fh:
        r = csv.DictReader(fh)
        return list(r.fieldnames or []), list(r)


def _key(row: dict[str, str], attributes: Sequence[str]) -> tuple[float, ...]:
    return tuple(float(row[a]) for a in attributes)


def judge_assignments(case: Case, seed: int, count: int,
                      keys: Sequence[tuple[float, ...]]) -> set[tuple[float, ...]]:
    """The judge set of (case, seed): the same for every design."""
    distinct = sorted(set(keys))
    rng = np.random.default_rng([int(seed), 9173, zlib.crc32(case.name.encode())])
    pick = rng.choice(len(distinct), size=min(count, len(distinct) - 1), replace=False)
    return {distinct[int(i)] for i in pick}


def split_case(job: Job, tmp: Path) -> tuple[Path, list[dict[str, str]]]:
    """Write the case minus the judge set to ``tmp``; return (train CSV, judge rows with
    categorical values as the codes replay gives them in the train CSV)."""
    header, rows = read_case(job.case.csv, job.case.attributes)
    keys = [_key(r, job.case.attributes) for r in rows]
    judge = judge_assignments(job.case, job.seed, job.judge, keys)
    train = tmp / f"{job.case.name}.csv"
    kept = [r for r, k in zip(rows, keys, strict=True) if k not in judge]
    with train.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        w.writerows(kept)
    judged = [r for r, k in zip(rows, keys, strict=True) if k in judge]
    return train, recode(judged, kept, job.case.categorical)


def recode(rows: Sequence[dict[str, str]], train: Sequence[dict[str, str]],
           categorical: Sequence[str]) -> list[dict[str, str]]:
    """``rows`` with each categorical value as the code replay gives it in ``train`` (k-th of
    the sorted category strings there); rows with a category ``train`` lacks are dropped."""
    codes = {c: {v: str(i + 1) for i, v in enumerate(sorted({r[c] for r in train}))}
             for c in categorical}
    return [{**r, **{c: codes[c][r[c]] for c in categorical}} for r in rows
            if all(r[c] in codes[c] for c in categorical)]


def design_arg(design: str) -> str:
    return str(Path(design).resolve()) if design.endswith((".yaml", ".yml")) else design


def design_label(design: str) -> str:
    return Path(design).stem if design.endswith((".yaml", ".yml")) else design


def replay_argv(job: Job, train: Path, out: Path) -> list[str]:
    """The ``nimo replay`` arguments of ``job`` on its training CSV, writing JSON to ``out``."""
    argv = ["replay", str(train), "--design", design_arg(job.design), "--seed",
            str(job.seed), "--json", str(out), "--quiet", "--external-test",
            str(job.external), "--attributes", ",".join(job.case.attributes),
            "--time-column", "T"]
    if job.case.load:
        argv += ["--load", ",".join(job.case.load)]
    if job.case.categorical:
        argv += ["--categorical", ",".join(job.case.categorical)]
    if job.calibration:
        argv += ["--calibration-split", str(job.calibration)]
    return argv


def run_campaign(job: Job) -> dict[str, Any]:
    """One replay campaign through the CLI, scored; never raises."""
    from workbench.cli import main

    t0 = time.perf_counter()
    rec: dict[str, Any] = {"suite": job.case.suite, "case": job.case.name,
                           "design": design_label(job.design), "seed": job.seed,
                           "configurations": job.case.configurations, "judge": job.judge,
                           "external": job.external}
    with tempfile.TemporaryDirectory(prefix="nimo-bench-") as d:
        tmp = Path(d)
        train, judge_rows = split_case(job, tmp)
        out = tmp / "run.json"
        argv = replay_argv(job, train, out)
        err = io.StringIO()
        ds = load_case(train, job)
        X, T, repeats = whole_space(ds, judge_rows, job.case.attributes)
        space = SpaceError(X, T, job.case.attributes, repeats)
        with observing(space), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:
                code = int(e.code) if isinstance(e.code, int) else 1
            except Exception as e:  # a crash is a result too
                code, _ = 99, err.write(f"{type(e).__name__}: {e}")
        rec["wall_s"] = time.perf_counter() - t0
        if code != 0 or not out.exists():
            rec.update(exit=code, error=err.getvalue().strip()[-500:])
            return rec
        doc = json.loads(out.read_text())
        external = external_cases(ds, job)
    rec["exit"] = 0
    rec.update(score(doc, job, judge_rows, external))
    rec.update(space_scores(space, rec))
    rec.update(space_coverage(space, doc.get("model")))
    rec["wall_s"] = time.perf_counter() - t0
    return rec


def load_case(train: Path, job: Job) -> Any:
    """The training CSV of ``job`` as replay loads it (its categorical codes)."""
    from workbench.replay import load_dataset

    return load_dataset(train, list(job.case.attributes), "T",
                        categorical=job.case.categorical)


def external_cases(ds: Any, job: Job) -> list[tuple[dict[str, float], float]]:
    """The replay's external test set of ``job`` (on its loaded training data ``ds``) as
    (assignment, mean T) pairs."""
    from workbench.replay import external_test_set

    return [(ds.space.as_dict(a), ds.mean_T(a))
            for a in external_test_set(ds, job.external, job.seed)]


def score(doc: dict[str, Any], job: Job, judge_rows: Sequence[dict[str, str]],
          external: Sequence[tuple[dict[str, float], float]] = ()) -> dict[str, Any]:
    its = doc.get("iterations") or []
    final = doc.get("final") or {}
    points: list[Point] = [(int(it["run"]), float(it["acquisition_s"]), it.get("external_mape_pct"))
                           for it in its]
    f_ext = final.get("external_mape_pct")
    total = float(final.get("all_samples_s") or math.nan)
    hit = reach_and_keep(points, TARGET_PCT, f_ext)
    internal = [it.get("internal_error_pct") for it in its]
    r: dict[str, Any] = {
        "runs": final.get("runs", len(its)), "final_mape": f_ext,
        "acquisition_s": final.get("acquisition_s"), "all_samples_s": total,
        "stop_pct_time": 100.0 * float(final.get("acquisition_s") or 0.0) / total,
        "stopped_because": doc.get("stopped_because"),
        "reach_run": hit[0] if hit else None, "reach_s": hit[1] if hit else None,
        "reached_within": reached_within(hit, total),
        "curve": {str(f): mape_at_budget(points, f * total, f_ext) for f in TIME_FRACTIONS},
        "internal_at_stop": next((v for v in reversed(internal) if v is not None), None),
        "honesty": honesty_ratio(internal, f_ext),
        "trace": [[p[0], round(p[1], 3), p[2], v] for p, v in zip(points, internal, strict=True)],
    }
    marks = {}
    for f in CONFIG_FRACTIONS:
        k = max(1, math.ceil(f * job.case.configurations))
        m, stopped = mape_after_runs(points, k, f_ext)
        marks[str(f)] = {"runs": k, "mape": m, "stopped_before": stopped}
    r["marks"] = marks
    r["external_coverage"] = final.get("external_coverage_90")
    r["far_share"] = ((doc.get("model") or {}).get("training") or {}).get("far_share")
    r.update(judge_scores(doc.get("model"), job.case.attributes, judge_rows))
    # what the judge coverage was when replay recalibrated on the external test set (until
    # issue 9 item 5): the "after" column, for comparison only
    after = judge_scores(doc.get("model"), job.case.attributes, judge_rows, external)
    r["coverage_extcal"] = after.get("coverage")
    r["judge_inside_extcal"] = after.get("judge_inside", 0)
    return r


def judge_scores(model_doc: Any, attributes: Sequence[str],
                 judge_rows: Sequence[dict[str, str]],
                 recalibrate_on: Sequence[tuple[dict[str, float], float]] = ()
                 ) -> dict[str, Any]:
    """The delivered model on the judge runs (with ``recalibrate_on``: after recalibrating
    its intervals on those (assignment, T) cases)."""
    if not model_doc or not judge_rows:
        return {"coverage": None}
    from nimo.model import CostModel
    from nimo.model.calibration import EXTERNAL

    try:
        model = CostModel.from_dict(model_doc)
        if recalibrate_on:
            model = model.calibrated_on(list(recalibrate_on), EXTERNAL)
    except Exception as e:  # noqa: BLE001 - report, do not crash the benchmark
        return {"coverage": None, "model_error": f"{type(e).__name__}: {e}"}
    by_point: dict[tuple[float, ...], list[float]] = {}
    for row in judge_rows:
        by_point.setdefault(_key(row, attributes), []).append(float(row["T"]))
    intervals, measured, ape, nonpositive, widths = [], [], [], 0, []
    for point, Ts in by_point.items():
        p = model.predict_interval(dict(zip(attributes, point, strict=True)), LEVEL)
        mean_T = float(np.mean(Ts))
        widths.append((p.hi - p.lo) / p.mean if p.mean > 0 else math.nan)
        ape.append(abs(p.mean - mean_T) / mean_T * 100.0)
        nonpositive += not (math.isfinite(p.mean) and p.mean > 0)
        for T in Ts:
            intervals.append((p.lo, p.hi))
            measured.append(T)
    inside, total, nan = interval_hits(intervals, measured)
    return {"coverage": inside / total if total else None, "judge_inside": inside,
            "judge_runs": total, "judge_nan_intervals": nan,
            "judge_mape": float(np.mean(ape)), "judge_nonpositive": nonpositive,
            "judge_width": float(np.nanmedian(widths)) if np.isfinite(widths).any() else None}


def run_job(args: tuple[str, Job]) -> dict[str, Any]:
    kind, job = args
    try:
        if kind == "gbr":
            from benchmarks.learning.gbr import run_gbr

            return run_gbr(job)
        return run_campaign(job)
    except Exception as e:  # noqa: BLE001 - the pool must finish the other jobs
        return {"suite": job.case.suite, "case": job.case.name, "seed": job.seed,
                "design": GBR if kind == "gbr" else design_label(job.design), "exit": 98,
                "error": f"{type(e).__name__}: {e}", "wall_s": 0.0}


# --------------------------------------------------------------------------- main

def sizes(case: Case, judge: int | None, external: int | None) -> tuple[int, int]:
    """(judge, external) assignment counts: 20 / 30 on generated apps; 15% / 20% of the
    configurations on real data (at least 2 / 3)."""
    n = case.configurations
    if case.kind == "generated":
        j, e = judge if judge is not None else 20, external if external is not None else 30
    else:
        j = judge if judge is not None else max(2, round(0.15 * n))
        e = external if external is not None else max(3, round(0.20 * n))
    return j, e


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", choices=SUITES)
    ap.add_argument("--designs", default=f"recommended,{RANDOM}",
                    help="comma-separated presets or YAML paths")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--apps", type=int, help="only the first N cases of the suite")
    ap.add_argument("--skip", type=int, default=0, metavar="N",
                    help="leave out the first N cases (with --size: fresh applications "
                    "beyond the ones a design was tuned on)")
    ap.add_argument("--size", type=int, default=60, help="generated suite size (default 60)")
    ap.add_argument("--workers", type=int, default=2, help="processes (at most 2)")
    ap.add_argument("--judge", type=int, help="judge-set assignments held out per campaign")
    ap.add_argument("--external", type=int, help="external test assignments per campaign")
    ap.add_argument("--calibration", type=int, default=0, metavar="N",
                    help="replay --calibration-split N (assignments withheld from the planner "
                    "to calibrate the intervals; default 0: the model's own calibration)")
    ap.add_argument("--no-gbr", action="store_true", help="real suites: skip gradient boosting")
    ap.add_argument("--cache", type=Path, help="where suite CSVs are written "
                    "(default $NIMO_BENCH_CACHE or /tmp/nimo-bench-cache)")
    ap.add_argument("--out", type=Path, help="write every record and the summary as JSON")
    return ap


def job_list(args: argparse.Namespace, cases: Sequence[Case], seeds: Sequence[int],
             designs: Sequence[str]) -> list[tuple[str, Job]]:
    """One replay per (case, seed, design), and one gradient boosting fit per real (case, seed)."""
    jobs: list[tuple[str, Job]] = []
    for case in cases:
        j, e = sizes(case, args.judge, args.external)
        for seed in seeds:
            jobs.extend(("replay", Job(case, d, seed, j, e, args.calibration)) for d in designs)
            if args.suite not in GENERATED and not args.no_gbr:
                jobs.append(("gbr", Job(case, "", seed, j, e)))
    return jobs


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    t0 = time.perf_counter()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    designs = [d for d in args.designs.split(",") if d]
    cases = load_suite(args.suite, args.cache, args.size)[args.skip:]
    if args.apps:
        cases = cases[: args.apps]
    generated = args.suite in GENERATED
    jobs = job_list(args, cases, seeds, designs)
    workers = max(1, min(args.workers, 2))
    print(f"{args.suite}: {len(cases)} cases, {len(jobs)} jobs, {workers} workers",
          file=sys.stderr)
    records = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_job, j) for j in jobs]
        for i, fut in enumerate(as_completed(futures), 1):
            records.append(fut.result())
            print(progress_line(records[-1], i, len(jobs), time.perf_counter() - t0),
                  file=sys.stderr)
    wall = time.perf_counter() - t0
    summary = summarize(records, generated)
    print(report(summary, generated, len(cases), seeds, wall, records))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({
            "suite": args.suite, "designs": designs, "seeds": seeds, "wall_s": wall,
            "cases": [{**asdict(c), "csv": str(c.csv)} for c in cases],
            "summary": summary, "records": records}, indent=1, default=str) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
