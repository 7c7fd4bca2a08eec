"""Learning with several Slurm jobs in flight (issue 13 item 1): wall time and accuracy.

    python benchmarks/slurm_batch.py [--batches 1,2] [--max-runs 24] [--holdout 10] [--dir DIR]

Without ``--dir`` a temporary Slurm lab is built (5 hosts: 4 nodes; prefix ``nsc-``, subnet
10.82; removed at the end); with ``--dir`` the lab made by ``nimo lab up --slurm --dir DIR``
is used. For each batch size B it runs the acceptance campaign of
``tests/integration/test_slurm_campaign.py`` (pwork over nodes 1-4, CPU share per node and
tasks per node; ``extends: recommended``, ``stop: {error_pct: 8, max_runs: N}``,
``batch: B``, ``slurm.max_jobs`` = the largest B) with ``--holdout``, and prints per campaign:
the learning wall time (first learning submit to last learning collection), the sum of the
learning runs' T and of their costs (submit to collected), and the holdout MAPE.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from slurm_overhead import lab_inventory, write_inventory  # run as a script: benchmarks/

from nimo.store import open_store

LEARNING = ("reference", "train", "test", "pbdf")


# the acceptance campaign's inventory: CPU shares that bind on this 2-core machine
CPU_SHARES = [0.05, 0.08, 0.11, 0.15, 0.2]
WORK_MB = 300


def run_campaign(inv: Path, tmp: Path, batch: int, max_runs: int, holdout: int
                 ) -> dict[str, float]:
    design = tmp / f"batch{batch}.yaml"
    design.write_text(f"extends: recommended\nbatch: {batch}\n"
                      f"stop: {{error_pct: 8, max_runs: {max_runs}}}\n")
    url, out = f"sqlite:///{tmp / f'b{batch}.db'}", tmp / f"b{batch}.json"
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "workbench", "campaign", "run", str(inv),
                           "--design", str(design), "--holdout", str(holdout), "--store", url,
                           "--name", f"batch{batch}", "--json", str(out), "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"batch {batch}: campaign failed: {proc.stderr[-1500:]}")
    total = time.time() - t0
    with open_store(url) as store:
        runs = [r for r in store.runs(f"batch{batch}")
                if str(r.purpose) in LEARNING and r.started_at and r.ended_at]
    final = json.loads(out.read_text())["final"]
    return {"runs": len(runs),
            "wall_s": max(r.ended_at for r in runs) - min(r.started_at for r in runs),
            "sum_T_s": sum(r.sample.T for r in runs if r.sample is not None),
            "sum_cost_s": sum(r.ended_at - r.started_at for r in runs),
            "holdout_mape_pct": final.get("holdout_mape_pct") or float("nan"),
            "campaign_s": total}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", default="1,2")
    p.add_argument("--max-runs", type=int, default=24)
    p.add_argument("--holdout", type=int, default=10)
    p.add_argument("--dir", help="use the lab built by `nimo lab up --slurm --dir DIR`")
    a = p.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nimo-bench-")))
        lab_inv, _ = lab_inventory(stack, tmp, a.dir, "nsc-", "10.82")
        inv = write_inventory(lab_inv, tmp / "inv.yaml", max(batches), WORK_MB, CPU_SHARES)
        print(f"{'batch':>5} {'runs':>4} {'learning wall s':>15} {'sum T s':>8} "
              f"{'sum cost s':>10} {'wall/sum cost':>13} {'holdout MAPE':>12}")
        for b in batches:
            r = run_campaign(inv, tmp, b, a.max_runs, a.holdout)
            print(f"{b:>5} {r['runs']:>4.0f} {r['wall_s']:>15.1f} {r['sum_T_s']:>8.1f} "
                  f"{r['sum_cost_s']:>10.1f} {r['wall_s'] / r['sum_cost_s']:>13.2f} "
                  f"{r['holdout_mape_pct']:>11.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
