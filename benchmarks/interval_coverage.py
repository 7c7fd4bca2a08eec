"""How often a new run's measured T falls inside the exported model's 90% interval.

Replays the recommended design on each dataset over several seeds, then splits the
campaign's external test set (random assignments never trained on) in two: the first
``--calibrate`` cases calibrate, the rest evaluate. Prints, per dataset, the coverage and
median relative width of three intervals:

- parametric: Student-t on the predictors' variances alone;
- own: the model as delivered: widened to the studentized leave-one-out residuals of the
  training runs, or, for a model blended with its Gaussian process, set by the blend's
  studentized out-of-fold residuals (``nimo.model.cost.CV``);
- holdout: widened to the studentized residuals of the calibration cases (what a live
  campaign's ``--holdout N`` or a replay's external test set gives the exported model).

Usage: python benchmarks/interval_coverage.py [--seeds 6] [--calibrate 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nimo.campaign import Campaign, current_model  # noqa: E402
from nimo.planner import make_planner  # noqa: E402
from workbench.designs import load_design  # noqa: E402
from workbench.replay import open_replay  # noqa: E402

DATASETS = ("lab/checksum", "synthetic/cpu_bound", "synthetic/io_bound",
            "synthetic/memory_cliff", "synthetic/prefetch_interaction", "synthetic/saturating")
LEVEL = 0.90


def score(model, cases) -> tuple[list[bool], list[float]]:
    hits, widths = [], []
    for assignment, T in cases:
        p = model.predict_interval(assignment, LEVEL)
        hits.append(bool(p.lo <= T <= p.hi))
        widths.append((p.hi - p.lo) / p.mean)
    return hits, widths


def one(dataset: str, seed: int, n_cal: int) -> dict[str, tuple[list[bool], list[float]]]:
    runner, external = open_replay(str(ROOT / "datasets" / f"{dataset}.csv"), seed=seed)
    planner = make_planner(runner.space, load_design("recommended"), seed, runner.kind)
    Campaign(planner, runner, external=external).run()
    model = current_model(planner)
    cal, test = external[:n_cal], external[n_cal:]
    return {
        "parametric": score(model.calibrated({}), test),
        "own": score(model, test),
        "holdout": score(model.calibrated_on(cal, "holdout-studentized"), test),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--calibrate", type=int, default=10,
                    help="external cases used to calibrate (the rest evaluate)")
    args = ap.parse_args()
    print(f"coverage of {LEVEL:.0%} intervals on unseen runs (recommended design, "
          f"{args.seeds} seeds, {args.calibrate} calibration cases per seed)")
    print(f"{'dataset':32s} {'parametric':>18s} {'own':>18s} {'holdout':>18s}")
    for dataset in DATASETS:
        pooled: dict[str, tuple[list[bool], list[float]]] = {}
        for seed in range(args.seeds):
            for kind, (hits, widths) in one(dataset, seed, args.calibrate).items():
                h, w = pooled.setdefault(kind, ([], []))
                h.extend(hits)
                w.extend(widths)
        cells = [f"{sum(h) / len(h):.2f} (w {statistics.median(w):.2f})"
                 for h, w in pooled.values()]
        print(f"{dataset:32s} " + " ".join(f"{c:>18s}" for c in cells))
    print("w: median interval width / predicted T")
    return 0


if __name__ == "__main__":
    sys.exit(main())
