"""Per-run overhead of the Slurm runner on the lab's Slurm cluster (issue 13, acceptance 4).

    python benchmarks/slurm_overhead.py [--runs 8] [--nodes 2] [--dir DIR]

Without ``--dir`` a temporary Slurm lab is built (5 hosts: 4 nodes; prefix ``nsb-``, subnet
10.81; removed at the end); with ``--dir`` the lab made by ``nimo lab up --slurm --dir DIR``
is used. Runs the shipped parallel app ``pwork`` (little work) ``--runs`` times one after the
other, then as one batch with ``slurm.max_jobs`` in flight. Per run it prints T (the job
step's own time), submit -> start (sbatch until the batch script's first line ran),
end -> collected (the step's end until nimo had the outcome: one squeue poll, scontrol,
the result files) and the whole overhead = cost - T.
Target: submit -> start and end -> collected <= 2 s each per run on the lab.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
from pathlib import Path

import yaml

from nimo.records import RunOutcome, RunRequest
from workbench.lab import Lab
from workbench.slurm import open_slurm_runner


def write_inventory(lab_inventory: Path, out: Path, max_jobs: int, work_mb: int = 50,
                    cpu_shares: list[float] | None = None) -> Path:
    """The lab's inventory with pwork's work, ``slurm.max_jobs`` and (if given) the levels
    of the CPU-share knob set (``slurm_batch`` uses it too)."""
    doc = yaml.safe_load(lab_inventory.read_text())
    if cpu_shares is not None:
        doc["knobs"][1]["levels"] = cpu_shares
    cmd = doc["application"]["command"]
    cmd[cmd.index("--work-mb") + 1] = str(work_mb)
    doc["slurm"]["max_jobs"] = max_jobs
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def lab_inventory(stack: contextlib.ExitStack, tmp: Path, lab_dir: str | None, prefix: str,
                  subnet_base: str) -> tuple[Path, Lab | None]:
    """The inventory of the lab made by ``nimo lab up --slurm --dir lab_dir``, or of a
    temporary 5-host Slurm lab built now and removed when ``stack`` closes (also returned)."""
    if lab_dir:
        return Path(lab_dir) / "inventory.yaml", None
    lab = Lab(tmp / "lab", hosts=5, prefix=prefix, subnet_base=subnet_base, slurm=True)
    stack.callback(lab.down)
    lab.up()
    return lab.inventory_path, lab


def row(o: RunOutcome) -> tuple[float, float, float, float]:
    assert o.sample is not None, o.reason
    t = o.sample.meta["timing"]
    return (o.sample.T, t["submit_to_start_s"], t["end_to_collected_s"], o.overhead_s)


def report(title: str, outcomes: list[RunOutcome]) -> None:
    print(f"\n{title}")
    print(f"{'run':>4} {'nodes':>5} {'T s':>6} {'submit->start':>14} {'end->collected':>15} "
          f"{'overhead s':>11}")
    rows = []
    for o in outcomes:
        r = row(o)
        rows.append(r)
        print(f"{o.request.run:>4} {o.request.assignment['nodes']:>5g} {r[0]:>6.2f} "
              f"{r[1]:>14.2f} {r[2]:>15.2f} {r[3]:>11.2f}")
    cols = list(zip(*rows, strict=True))
    print(f"mean {'':>5} {statistics.mean(cols[0]):>6.2f} {statistics.mean(cols[1]):>14.2f} "
          f"{statistics.mean(cols[2]):>15.2f} {statistics.mean(cols[3]):>11.2f}")
    print(f"max  {'':>5} {max(cols[0]):>6.2f} {max(cols[1]):>14.2f} {max(cols[2]):>15.2f} "
          f"{max(cols[3]):>11.2f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--max-jobs", type=int, default=2)
    p.add_argument("--dir", help="use the lab built by `nimo lab up --slurm --dir DIR`")
    a = p.parse_args()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nimo-bench-")))
        lab_inv, lab = lab_inventory(stack, tmp, a.dir, "nsb-", "10.81")
        if lab is not None:
            print(f"Slurm lab up in {lab.timings['up_s']:.2f} s "
                  f"(slurm part {lab.timings['slurm_up_s']:.2f} s)")
        runner = open_slurm_runner(write_inventory(lab_inv, tmp / "inv.yaml", a.max_jobs))
        stack.callback(runner.close)
        share = runner.space.attributes[1].levels[-1]
        assignment = {"nodes": a.nodes, "cpu_share": share, "tasks_per_node": 1}
        runner.run(RunRequest(1, assignment, "train"))  # stages the dataset (not counted)
        seq = [runner.run(RunRequest(i, assignment, "train")) for i in range(2, a.runs + 2)]
        report(f"{a.runs} runs one after the other (nodes={a.nodes}, cpu_share={share:g})", seq)
        first = a.runs + 2
        batch = runner.run_many([RunRequest(first + i, assignment, "train")
                                 for i in range(a.runs)])
        report(f"{a.runs} runs as one batch, slurm.max_jobs={a.max_jobs} in flight", batch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
