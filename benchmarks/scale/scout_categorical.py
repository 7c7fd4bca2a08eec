"""Acceptance 3 of issue 12: Scout with the instance family as a categorical attribute.

Per workload group (completed runs only), two replays with the same seed and the same 15
withheld external configurations: attributes ``nodes, vcpus_per_node, mem_gib_per_node``
(numeric only), and the same plus ``family`` (c4/m4/r4) as a categorical attribute. The
design is the recommended one plus ``predictors.family: auto`` (the family model chosen by
its honest estimate on the measured runs). Prints the external MAPE of the project's choice
and of the planner's own model per group and their medians over the groups.

Usage: python benchmarks/scale/scout_categorical.py [--seeds 0,1,2] [--external 15]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from workbench.campaigns import launch_replay  # noqa: E402
from workbench.designs import load_design  # noqa: E402
from workbench.replay import ReplayOptions, ReplayRunner  # noqa: E402
from workbench.replay_family import scale_final  # noqa: E402

SCOUT = ROOT.parent / "shared" / "datasets" / "scout" / "scout_multinode_runtimes.csv"
NUMERIC = ("nodes", "vcpus_per_node", "mem_gib_per_node")


def groups() -> list[str]:
    with open(SCOUT, newline="") as fh:
        return sorted({r["workload_group"] for r in csv.DictReader(fh)})


def one(group: str, categorical: bool, seed: int, external: int) -> tuple[float, float, str]:
    attrs = (*NUMERIC, "family") if categorical else NUMERIC
    options = ReplayOptions(str(SCOUT), attrs, "elapsed_time_s",
                            (("completed", "True"), ("workload_group", group)),
                            external_test=external, seed=seed,
                            categorical=("family",) if categorical else ())
    runner = ReplayRunner.open(options)
    design = load_design("recommended").to_dict()
    design["predictors"] = {**design.get("predictors", {}), "family": "auto"}
    result = launch_replay(runner, design=design, seed=seed, progress=False)
    fam = scale_final(result, runner, result.design)["family"]
    return fam["external_mape_pct"], result.to_dict()["final"]["external_mape_pct"], fam["name"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0", help="comma-separated seeds (split and sampling)")
    ap.add_argument("--external", type=int, default=15)
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print("Scout, external MAPE (%) per workload group: project's choice (family chosen) and "
          "the planner's model")
    cols: dict[str, list[float]] = {"num": [], "cat": [], "pnum": [], "pcat": []}
    for seed in seeds:
        per_seed = one_seed(seed, args.external)
        for k, v in per_seed.items():
            cols[k] += v
    med = {k: statistics.median(v) for k, v in cols.items()}
    print(f"over {len(seeds)} seed(s) x {len(cols['num']) // len(seeds)} groups: median "
          f"external MAPE, project's choice {med['num']:.1f}% numeric only vs "
          f"{med['cat']:.1f}% with the family; planner's model {med['pnum']:.1f}% vs "
          f"{med['pcat']:.1f}%")
    ok = med["cat"] <= med["num"]
    print(f"project's choice: median external MAPE with the categorical family "
          f"{med['cat']:.1f}% vs numeric only {med['num']:.1f}% -> "
          f"{'PASS' if ok else 'FAIL'} (acceptance: no worse)")
    return 0


def one_seed(seed: int, external: int) -> dict[str, list[float]]:
    print(f"seed {seed}\n{'group':28} {'numeric':>8} {'choice':8} {'+family':>8} {'choice':8} "
          f"{'planner':>8} {'planner+f':>9}")
    cols: dict[str, list[float]] = {"num": [], "cat": [], "pnum": [], "pcat": []}
    for g in groups():
        num, pnum, cnum = one(g, False, seed, external)
        cat, pcat, ccat = one(g, True, seed, external)
        for k, v in (("num", num), ("cat", cat), ("pnum", pnum), ("pcat", pcat)):
            cols[k].append(v)
        print(f"{g:28} {num:8.1f} {cnum:8} {cat:8.1f} {ccat:8} {pnum:8.1f} {pcat:9.1f}",
              flush=True)
    med = {k: statistics.median(v) for k, v in cols.items()}
    print(f"{'median':28} {med['num']:8.1f} {'':8} {med['cat']:8.1f} {'':8} "
          f"{med['pnum']:8.1f} {med['pcat']:9.1f}")
    return cols


if __name__ == "__main__":
    raise SystemExit(main())
