"""Per-run overhead of the live SSH executor next to the application's own time, on the lab.

    python benchmarks/run_overhead.py [--runs 5] [--app compress] [--size-mb 8] [--dir DIR]

Without ``--dir`` a temporary lab is built (prefix ``nimb-``, subnet 10.79; removed at the
end); with ``--dir`` the lab made by ``nimo lab up --dir DIR`` is used. Runs G ``--runs`` times
on one assignment: the first run also measures the resource profile (cached afterwards).
Prints, per run, T (the application's own time) and the overhead = cost - T split into
set-up (network then mount, beside the cgroup), monitors start, monitors stop, the wait for
the collection (sadf/tshark analysis overlapping the teardown) and teardown.
Target: overhead < 1 s per run (profile excluded; it is paid once per assignment).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
from pathlib import Path

import yaml

from nimo.records import RunRequest
from workbench.apps import APPS
from workbench.executor import open_runner
from workbench.lab import Lab

COLUMNS = ("setup_s", "profile_s", "monitors_start_s", "monitors_stop_s", "collect_wait_s",
           "teardown_s")


def write_inventory(lab_inventory: Path, out: Path, app: str, size_mb: float) -> Path:
    doc = yaml.safe_load(lab_inventory.read_text())
    doc["application"] = APPS[app].application(size_mb, timeout_s=120)
    doc["application"]["dataset"]["path"] = f"{app}-{size_mb:g}"
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--app", choices=sorted(APPS), default="compress")
    p.add_argument("--size-mb", type=float, default=8)
    p.add_argument("--dir", help="use the lab built by `nimo lab up --dir DIR`")
    p.add_argument("--assignment", default="cpu_share=1,memory_mb=256,delay_ms=0,rate_mbit=400")
    a = p.parse_args()
    assignment = {k: float(v) for k, v in (kv.split("=") for kv in a.assignment.split(","))}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nimo-bench-")))
        if a.dir:
            lab_inv = Path(a.dir) / "inventory.yaml"
        else:
            lab = Lab(tmp / "lab", hosts=2, prefix="nimb-", subnet_base="10.79")
            stack.callback(lab.down)
            lab.up()
            lab_inv = lab.inventory_path
        runner = open_runner(write_inventory(lab_inv, tmp / "inv.yaml", a.app, a.size_mb))
        stack.callback(runner.close)
        print(f"app {a.app} ({a.size_mb:g} MB), assignment {assignment}")
        print(f"{'run':>3} {'T':>7} {'cost':>7} {'overhead':>8} " +
              " ".join(f"{c[:-2]:>13}" for c in COLUMNS))
        overheads = []
        for i in range(1, a.runs + 1):
            out = runner.run(RunRequest(i, assignment, "train"))
            if not out.ok:
                print(f"{i:>3} FAILED: {out.reason}")
                continue
            s, t = out.sample, out.sample.meta["timing"]
            print(f"{i:>3} {s.T:7.3f} {s.cost_s:7.3f} {out.overhead_s:8.3f} " +
                  " ".join(f"{t.get(c, 0.0):13.3f}" for c in COLUMNS))
            if i > 1:
                overheads.append(out.overhead_s)
        if overheads:
            med = statistics.median(overheads)
            print(f"overhead without the (cached) profile: median {med:.3f} s, "
                  f"max {max(overheads):.3f} s over {len(overheads)} runs (target < 1 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
