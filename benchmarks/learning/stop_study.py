"""Stop rules and error estimates scored offline on campaigns that never stop (issue 9, item 3).

A stop rule decides when a campaign ends, so comparing two rules normally takes two sets of
campaigns. Here each campaign runs once with stopping disabled (a design that extends
``recommended`` with an unreachable target and a run cap), recording after every run the
cross-validated error, the run's prospective error (the model of its time predicted it before
it ran) and the external MAPE. Any rule built from those figures is then replayed over the
trajectories: where it would have stopped, the external / internal ratio there, and whether
it reached and kept 10% within 2% of the all-samples time. This is how the capped fold error
and the 10-run confirmation of ``recommended`` were chosen, on the tuning suite only::

    PYTHONPATH=. python -m benchmarks.learning.stop_study run tuning --apps 40 --seeds 1,2 \\
        --out /tmp/traj.json
    PYTHONPATH=. python -m benchmarks.learning.stop_study score /tmp/traj.json

The prospective errors are read from the planner while it runs (a study hook on its
iteration records); the shipped planner is unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.learning.evaluate import (  # noqa: E402
    Job,
    design_arg,
    replay_argv,
    sizes,
    split_case,
)
from benchmarks.learning.metrics import reach_and_keep, reached_within  # noqa: E402
from benchmarks.learning.suites import SUITES, load_suite  # noqa: E402
from nimo.planner.strategies.stop import ErrorThreshold, Patience, Progress  # noqa: E402

NEVER_STOP = "extends: %s\nname: never-stop\nstop: {error_pct: 0.001, patience: 1000, " \
             "max_runs: %d}\n"
Estimate = Callable[[float | None, Sequence[float]], float | None]


def _hook_prospective() -> None:
    """Add the latest prospective error to every iteration record (study only; once per
    process)."""
    from nimo.planner.common import BasePlanner

    original = BasePlanner._record
    if getattr(original, "study_hook", False):
        return

    def record(self: Any, req: Any, outcome: Any, **extra: object) -> Any:
        errors = self.prospective_errors
        extra.update(prospective_n=len(errors), prospective=errors[-1] if errors else None,
                     samples=self.learner.n)
        return original(self, req, outcome, **extra)

    record.study_hook = True  # type: ignore[attr-defined]
    BasePlanner._record = record  # type: ignore[method-assign]


KEYS = ("run", "purpose", "status", "acquisition_s", "internal_error_pct",
        "external_mape_pct", "prospective_n", "prospective", "samples")


def trajectory(job: Job, extra_keys: Sequence[str] = ()) -> dict[str, Any]:
    """One never-stopping replay of ``job``: per run, the figures the rules read (and the
    ``extra_keys`` a study hook added to the iteration records)."""
    from workbench.cli import main

    _hook_prospective()
    with tempfile.TemporaryDirectory(prefix="nimo-stop-") as d:
        train, _ = split_case(job, Path(d))
        out = Path(d) / "run.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(replay_argv(job, train, out))
        if code != 0:
            return {"case": job.case.name, "seed": job.seed, "exit": code}
        doc = json.loads(out.read_text())
    keys = KEYS + tuple(extra_keys)
    return {"case": job.case.name, "seed": job.seed, "exit": 0,
            "all_samples_s": doc["final"]["all_samples_s"],
            "iterations": [{k: it.get(k) for k in keys} for it in doc["iterations"]
                           if it.get("status") == "done"]}


# ------------------------------------------------------------------------------ scoring

def _mean_last(errors: Sequence[float], k: int) -> float | None:
    return float(np.mean(errors[-k:])) if len(errors) >= k else None


def _geometric(k: int) -> Estimate:
    def estimate(cv: float | None, prospective: Sequence[float]) -> float | None:
        p = _mean_last(prospective, k)
        return None if cv is None or p is None else float(np.sqrt(cv * p))
    return estimate


ESTIMATES: dict[str, Estimate] = {
    "cv": lambda cv, prospective: cv,
    "prospective-10": lambda cv, prospective: _mean_last(prospective, 10),
    "geometric(cv, prospective-5)": _geometric(5),
    "geometric(cv, prospective-10)": _geometric(10),
}


def _prospective_so_far(its: Sequence[dict[str, Any]]) -> list[list[float]]:
    """The prospective errors known after each iteration."""
    seen: list[float] = []
    out = []
    for it in its:
        if (it.get("prospective_n") or 0) > len(seen):
            seen.append(float(it["prospective"]))
        out.append(list(seen))
    return out


def stop_index(its: Sequence[dict[str, Any]], values: Sequence[float | None],
               prospective: Sequence[Sequence[float]], confirm: int, min_samples: int = 12,
               target: float = 5.0, patience: int = 30) -> int:
    """Where ``recommended``'s stop rule (the planner's own conditions: the target with its
    confirming runs, then the honest patience), reading ``values`` as the internal error,
    stops."""
    rules = (ErrorThreshold(target, min_samples, confirm), Patience(patience, True, target))
    history: list[float] = []
    for i, (it, value) in enumerate(zip(its, values, strict=True)):
        if value is not None and it["purpose"] == "train":
            history.append(value)
        progress = Progress(it["run"], it["acquisition_s"], value, it.get("samples") or 0,
                            list(history), prospective[i])
        if any(rule.reason(progress) for rule in rules):
            return i
    return len(its) - 1


def score_campaign(traj: dict[str, Any], estimate: str, confirm: int) -> dict[str, Any]:
    its = traj["iterations"]
    prospective = _prospective_so_far(its)
    values = [ESTIMATES[estimate](it["internal_error_pct"], p)
              for it, p in zip(its, prospective, strict=True)]
    return score_values(traj, values, confirm, prospective)


def score_values(traj: dict[str, Any], values: Sequence[float | None], confirm: int,
                 prospective: Sequence[Sequence[float]] | None = None,
                 patience: int = 30) -> dict[str, Any]:
    """Where the stop rule, reading ``values`` (one per iteration) as the internal error,
    stops ``traj``; the external MAPE and ext/int there, and whether it reached and kept
    10% within 2% of the all-samples time. ``prospective``: the traj's
    ``_prospective_so_far`` when the caller has it already."""
    its = traj["iterations"]
    if prospective is None:
        prospective = _prospective_so_far(its)
    return score_at(traj, values, stop_index(its, values, prospective, confirm,
                                             patience=patience))


def score_at(traj: dict[str, Any], values: Sequence[float | None], stop: int) -> dict[str, Any]:
    """The campaign stopped at iteration ``stop``: its run, external MAPE, ext/int (``values``
    read as the internal error) and whether it reached and kept 10% within 2% of the time."""
    its = traj["iterations"]
    final, internal = its[stop]["external_mape_pct"], values[stop]
    hit = reach_and_keep([(it["run"], it["acquisition_s"], it["external_mape_pct"])
                          for it in its[:stop + 1]], final=final)
    return {"stop_run": its[stop]["run"], "final": final,
            "ratio": final / internal if internal else None,
            "reached": reached_within(hit, traj["all_samples_s"])}


def summary_line(trajs: Sequence[dict[str, Any]], estimate: str, confirm: int) -> str:
    scored = [score_campaign(t, estimate, confirm) for t in trajs if t["exit"] == 0]
    return f"{estimate:30s} confirm {confirm:2d}: {scored_figures(scored)}"


def scored_figures(scored: Sequence[dict[str, Any]]) -> str:
    """Reach & keep, median stop run and final MAPE, and ext/int with its tails, over
    campaigns scored by :func:`score_at`."""
    ratios = np.array([s["ratio"] for s in scored if s["ratio"] is not None])
    return (f"reach & keep {100 * np.mean([s['reached'] for s in scored]):5.1f}%, stop at run "
            f"{statistics.median(s['stop_run'] for s in scored):5.1f}, final MAPE "
            f"{statistics.median(s['final'] for s in scored):5.2f}%, ext/int "
            f"{np.median(ratios):.2f} (> 2: {100 * np.mean(ratios > 2):4.1f}%, "
            f"< 0.5: {100 * np.mean(ratios < 0.5):4.1f}%), n {len(scored)}")


def _score_estimates(trajs: Sequence[dict[str, Any]]) -> None:
    for confirm in (5, 10):
        for estimate in ESTIMATES:
            print(summary_line(trajs, estimate, confirm))


def patience_scores(traj: dict[str, Any], patience: int, confirm: int = 10) -> dict[str, Any]:
    """``score_at`` where ``recommended``'s stop rule with plateau ``patience`` stops
    ``traj`` (the internal error as recorded); ``capped``: the trajectory ended first."""
    its = traj["iterations"]
    scored = score_values(traj, [it["internal_error_pct"] for it in its], confirm,
                          patience=patience)
    return {**scored, "capped": scored["stop_run"] == its[-1]["run"],
            "case": f"{traj['case']} s{traj['seed']}"}


def reachable(traj: dict[str, Any]) -> bool:
    """Whether some stop along ``traj`` reaches and keeps 10% within 2% of the time: the
    bound on what any stop rule can do with these runs."""
    its = traj["iterations"]
    values = [it["internal_error_pct"] for it in its]
    return any(score_at(traj, values, i)["reached"] for i in range(len(its)))


def score_patience(trajs: Sequence[dict[str, Any]], patiences: Sequence[int]) -> None:
    """Each plateau patience's figures, and the campaigns each one after the first gains
    or loses (reach and keep) against the first."""
    done = [t for t in trajs if t["exit"] == 0]
    scored = {p: [patience_scores(t, p) for t in done] for p in patiences}
    for p, rows in scored.items():
        finals_above = sum(r["final"] > 10 for r in rows)
        capped = sum(r["capped"] for r in rows)
        print(f"patience {p:4d}: {scored_figures(rows)}, finals > 10%: {finals_above}, "
              f"ended by the trajectory's cap: {capped}")
    best = sum(reachable(t) for t in done)
    print(f"any stop rule at best (stopped at the best run for it): reach & keep {best} of "
          f"{len(done)}")
    base = scored[patiences[0]]
    for p in patiences[1:]:
        pairs = list(zip(base, scored[p], strict=True))
        gained = [b["case"] for b, r in pairs if r["reached"] and not b["reached"]]
        lost = [b["case"] for b, r in pairs if b["reached"] and not r["reached"]]
        print(f"patience {p} against {patiences[0]}: gained {len(gained)} "
              f"({', '.join(gained)}), lost {len(lost)} ({', '.join(lost)})")


# ------------------------------------------------------------------------------ main

def main(argv: Sequence[str] | None = None,
         record: Callable[[Job], dict[str, Any]] | None = None,
         score_all: Callable[[Sequence[dict[str, Any]]], None] | None = None,
         description: str | None = None) -> int:
    """``run`` records trajectories with ``record`` (default :func:`trajectory`); ``score``
    prints ``score_all`` of them (default: every estimate of ESTIMATES, 5 and 10 confirming
    runs)."""
    ap = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="record never-stopping trajectories")
    run.add_argument("suite", choices=SUITES)
    run.add_argument("--apps", type=int, default=40)
    run.add_argument("--size", type=int, default=60)
    run.add_argument("--skip", type=int, default=0, help="leave out the suite's first N apps")
    run.add_argument("--seeds", default="1,2")
    run.add_argument("--max-runs", type=int, default=70)
    run.add_argument("--extends", default="recommended",
                     help="the design the never-stopping one extends (a preset or YAML path)")
    run.add_argument("--workers", type=int, default=1)
    run.add_argument("--out", type=Path, required=True)
    score = sub.add_parser("score", help="score the stop rules on recorded trajectories")
    score.add_argument("trajectories", type=Path)
    score.add_argument("--patience", help="plateau patiences to compare instead, e.g. 30,60 "
                       "(the first is the base)")
    args = ap.parse_args(argv)
    if args.command == "score":
        trajs = json.loads(args.trajectories.read_text())
        if args.patience:
            score_patience(trajs, [int(p) for p in args.patience.split(",")])
        else:
            (score_all or _score_estimates)(trajs)
        return 0
    with tempfile.TemporaryDirectory(prefix="nimo-stop-design-") as d:
        design = Path(d) / "never-stop.yaml"
        design.write_text(NEVER_STOP % (design_arg(args.extends), args.max_runs))
        jobs = []
        for case in load_suite(args.suite, None, args.size)[args.skip:args.skip + args.apps]:
            judge, external = sizes(case, None, None)
            jobs += [Job(case, str(design), int(s), judge, external)
                     for s in args.seeds.split(",") if s]
        with ProcessPoolExecutor(max(1, min(args.workers, 2))) as pool:
            trajs = list(pool.map(record or trajectory, jobs))
    args.out.write_text(json.dumps(trajs) + "\n")
    print(f"wrote {len(trajs)} trajectories to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
