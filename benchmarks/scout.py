"""Replay the real Scout measurements (Spark/Hadoop on AWS): one campaign per workload group.

Attributes nodes, vcpus_per_node, mem_gib_per_node; completed runs only; T learned directly.
Prints the external MAPE after 10%, 20% and 30% of the group's configurations have been
measured, for the recommended design and for random sampling with the same predictors
(medians over seeds). Usage: python benchmarks/scout.py [--seeds 5] [--external 15]
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nimo.campaign import Campaign, mape_pct  # noqa: E402
from nimo.planner import make_planner  # noqa: E402
from nimo.planner.design import parse_design  # noqa: E402
from workbench.designs import load_design  # noqa: E402
from workbench.replay import open_replay  # noqa: E402

SCOUT = ROOT.parent / "shared" / "datasets" / "scout" / "scout_multinode_runtimes.csv"
ATTRS = ["nodes", "vcpus_per_node", "mem_gib_per_node"]
FRACTIONS = (0.10, 0.20, 0.30)


class Snapshots:
    """Observer: external MAPE of the model at the moment each fraction is reached."""

    def __init__(self, marks: dict[int, float], external) -> None:
        self.marks, self.external, self.at = marks, external, {}

    def asked(self, requests) -> None: ...
    def outcome(self, outcome) -> None: ...
    def finished(self, result) -> None: ...
    def aborted(self, error) -> None: ...

    def iteration(self, outcome, record, model) -> None:
        if record.run in self.marks:
            self.at[self.marks[record.run]] = mape_pct(model, self.external)


def one(group: str, strategy: str, seed: int, external_n: int, design: str) -> dict:
    runner, external = open_replay(str(SCOUT), ATTRS, "elapsed_time_s",
                                   [("completed", "True"), ("workload_group", group)],
                                   external_n, seed)
    total = len(runner.dataset.runs)
    marks = {max(1, math.ceil(f * total)): f for f in FRACTIONS}
    base = load_design(design).to_dict() if strategy == "recommended" else \
        load_design("baseline-random").to_dict()
    base["stop"] = {"error_pct": 0, "min_samples": 1, "max_runs": max(marks)}
    planner = make_planner(runner.space, parse_design(base), seed, runner.kind)
    snap = Snapshots(marks, external)
    Campaign(planner, runner, external=external, observers=[snap]).run()
    return {"group": group, "strategy": strategy, "seed": seed, "total": total, **snap.at}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--external", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--design", default="recommended", help="design for the NIMO columns")
    args = ap.parse_args()
    with SCOUT.open() as fh:
        groups = sorted({row["workload_group"] for row in csv.DictReader(fh)})
    jobs = [(g, s, seed, args.external, args.design) for g in groups
            for s in ("recommended", "random") for seed in range(args.seeds)]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, *zip(*jobs, strict=True), chunksize=1))
    print(f"\nScout replay: {len(groups)} workload groups, external test {args.external} "
          f"configurations, medians over {args.seeds} seeds; external MAPE % after measuring "
          "10/20/30% of the configurations")
    head = f"{'workload group':<28}{'n':>4}" + "".join(
        f"{f'{s} {int(f * 100)}%':>14}" for s in ("nimo", "random") for f in FRACTIONS)
    print(head)
    print("-" * len(head))
    summary = {(s, f): [] for s in ("recommended", "random") for f in FRACTIONS}
    for g in groups:
        cells = []
        n = next(r["total"] for r in rows if r["group"] == g)
        for s in ("recommended", "random"):
            for f in FRACTIONS:
                vals = [r[f] for r in rows if r["group"] == g and r["strategy"] == s
                        and r.get(f) is not None]
                med = statistics.median(vals) if vals else float("nan")
                summary[(s, f)].append(med)
                cells.append(f"{med:>14.1f}")
        print(f"{g:<28}{n:>4}" + "".join(cells))
    print("-" * len(head))
    print(f"{'median over groups':<32}" + "".join(
        f"{statistics.median(summary[(s, f)]):>14.1f}" for s in ("recommended", "random")
        for f in FRACTIONS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
