"""Replay every design on the synthetic applications over several seeds.

Prints, per (application, design): the learning time needed to reach (and keep) external
MAPE <= 10% as a percentage of the all-samples time, the final external MAPE, and the runs,
as medians over seeds. Usage:

    python benchmarks/replay_designs.py [--seeds 10] [--designs a,b] [--apps x,y] [--jobs 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nimo.campaign import Campaign  # noqa: E402
from nimo.planner import make_planner  # noqa: E402
from workbench.designs import load_design, preset_names  # noqa: E402
from workbench.replay import open_replay  # noqa: E402

APPS = ("cpu_bound", "io_bound", "memory_cliff", "prefetch_interaction", "saturating")
TARGET = 10.0


def time_to_target(iterations, target: float = TARGET) -> float | None:
    """Learning time after which external MAPE stays <= target until the campaign ends."""
    reached = None
    for it in iterations:
        e = it.external_mape_pct
        if e is not None and e <= target:
            reached = it.acquisition_s if reached is None else reached
        elif reached is not None:
            reached = None
    return reached


def one(app: str, design_name: str, seed: int, data_dir: str) -> dict:
    runner, external = open_replay(str(Path(data_dir) / f"{app}.csv"), seed=seed)
    design = load_design(design_name)
    planner = make_planner(runner.space, design, seed, runner.kind)
    t0 = time.perf_counter()
    result = Campaign(planner, runner, external=external).run()
    wall = time.perf_counter() - t0
    total = runner.all_samples_s
    reach = time_to_target(result.iterations)
    return {
        "app": app, "design": design_name, "seed": seed,
        "reach_pct": None if reach is None else 100.0 * reach / total,
        "final_mape": result.external_mape_pct,
        "final_pct": 100.0 * result.acquisition_s / total,
        "runs": len(result.iterations),
        "plan_ms": 1000.0 * wall / max(len(result.iterations), 1),
    }


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--designs", default=",".join(preset_names()))
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data", default=str(ROOT / "datasets" / "synthetic"))
    args = ap.parse_args()
    designs = [d for d in args.designs.split(",") if d]
    apps = [a for a in args.apps.split(",") if a]
    jobs = [(a, d, s, args.data) for a in apps for d in designs for s in range(args.seeds)]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, *zip(*jobs, strict=True), chunksize=1))
    print(f"\nReplay benchmark: {args.seeds} seeds, external test 30 assignments; medians over "
          "seeds ('-' = never reached and kept <= 10%).")
    header = (f"{'application':<22}{'design':<24}{'to<=10% (% all)':>16}{'reached':>9}"
              f"{'final MAPE %':>13}{'final % all':>12}{'runs':>6}{'ms/step':>8}")
    print(header)
    print("-" * len(header))
    for app in apps:
        for d in designs:
            rs = [r for r in rows if r["app"] == app and r["design"] == d]
            reached = sum(r["reach_pct"] is not None for r in rs)
            # A seed that never reached counts as infinitely slow for the median.
            reach = [r["reach_pct"] if r["reach_pct"] is not None else float("inf") for r in rs]
            med = statistics.median(reach)
            med_s = "-" if med == float("inf") else f"{med:.2f}"
            print(f"{app:<22}{d:<24}{med_s:>16}{reached:>6}/{len(rs):<2}"
                  f"{median([r['final_mape'] for r in rs]):>13.2f}"
                  f"{median([r['final_pct'] for r in rs]):>12.2f}"
                  f"{median([r['runs'] for r in rs]):>6.0f}"
                  f"{median([r['plan_ms'] for r in rs]):>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
