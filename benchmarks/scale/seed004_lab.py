"""Acceptance 4 of issue 12: seed 004's sweep on the namespace lab.

CPU share 100/80/60/40/30/20/10% x threads 1/2/4 (an ``app_param`` knob, direction
capacity, passed to a shipped app as ``--threads``: ``compress``, CPU-bound, LZMA of a 4 MB
text dataset, by default; or ``checksum``, I/O-bound, 24 MB), every assignment measured
once with the ``baseline-all-samples`` design (``nimo campaign run``). The runs are exported
with ``nimo campaign samples``, the product form T = (a0 + a1/P)(b0 + b1/C) of seed 004 is
fitted with ``nimo model fit --family product`` and scored with ``nimo model score``; the
benchmark prints its mean and median fractional error on the sweep (seed 004's figure) and,
for honesty, the leave-one-run-out errors.

Usage: python benchmarks/scale/seed004_lab.py [--app compress|checksum] [--repeats 3]
       [--keep DIR]
(needs root and the lab's tools; builds a 3-host lab on a free slot and takes it down)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

NIMO = [sys.executable, "-m", "workbench"]
CPU_SHARES = [0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0]
THREADS = [1, 2, 4]
ATTRIBUTES = "cpu_share,nthreads"
SIZE_MB = {"compress": 4.0, "checksum": 24.0}


def nimo(*args: str) -> str:
    done = subprocess.run([*NIMO, *args], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"nimo {' '.join(args[:2])} exited {done.returncode}: "
                           f"{done.stderr[-1500:]}")
    return done.stdout


def sweep_inventory(lab, out_dir: Path, app_name: str = "compress", repeats: int = 1) -> Path:
    """The lab's inventory with the app, a CPU-share knob and a threads app parameter."""
    from workbench.apps import APPS

    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    size_mb = SIZE_MB[app_name]
    app = APPS[app_name].application(size_mb, timeout_s=120)
    app["repeats"] = repeats  # a run's T is the median of its repeats
    app["dataset"]["path"] = f"seed004-{app_name}-{size_mb:g}"
    base = [a for a in app["command"] if a not in ("--threads", "{threads}")]
    # the lab's hosts share this machine's file system, and /tmp/nimo-apps (the app_dir) is
    # shared by every checkout's labs: run this checkout's script, whoever uploaded last
    script = str(ROOT / "workbench" / "apps" / APPS[app_name].script)
    base = [script if a == "{app_dir}/" + APPS[app_name].script else a for a in base]
    app["command"] = [*base, "--threads", "{nthreads}"]
    doc["application"] = app
    doc["knobs"] = [{"kind": "cpu_share", "levels": CPU_SHARES},
                    {"name": "nthreads", "kind": "app_param", "direction": "capacity",
                     "levels": THREADS, "unit": "threads"}]
    doc["monitors"] = {"sar": False, "tshark": False, "profile": False}
    path = out_dir / "seed004.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run_sweep(lab, out_dir: Path, app_name: str = "compress", repeats: int = 1,
              name: str = "seed004-lab") -> Path:
    """Every assignment once; the runs as a CSV (``nimo campaign samples``)."""
    inv = sweep_inventory(lab, out_dir, app_name, repeats)
    url = f"sqlite:///{out_dir / 'nimo.db'}"
    nimo("campaign", "run", str(inv), "--design", "baseline-all-samples", "--store", url,
         "--name", name, "--json", str(out_dir / "campaign.json"), "--quiet")
    csv = out_dir / "runs.csv"
    nimo("campaign", "samples", name, "--store", url, "-o", str(csv))
    return csv


def figures(csv: Path, out_dir: Path) -> dict[str, float]:
    """The product form's mean and median fractional error on the sweep, and leave-one-out."""
    from nimo.families import fit_family
    from workbench.model_runs import read_runs

    model = out_dir / "product.json"
    nimo("model", "fit", str(csv), "--family", "product", "--attributes", ATTRIBUTES,
         "-o", str(model))
    score = json.loads(nimo("model", "score", str(model), str(csv), "--json", "-"))
    runs = read_runs(csv, ATTRIBUTES.split(","))
    loo = []
    for i in range(len(runs.rows)):
        keep = [j for j in range(len(runs.rows)) if j != i]
        m = fit_family("product", [runs.rows[j] for j in keep], runs.T[keep],
                       numeric=ATTRIBUTES.split(","))
        loo.append(abs(float(m.predict([runs.rows[i]])[0]) - runs.T[i]) / runs.T[i])
    return {"runs": len(runs.rows), "mean_pct": score["mape_pct"],
            "median_pct": score["median_ape_pct"], "loo_mean_pct": 100 * float(np.mean(loo)),
            "loo_median_pct": 100 * float(np.median(loo)),
            "T_min_s": float(runs.T.min()), "T_max_s": float(runs.T.max())}


def report(fig: dict[str, float], app_name: str = "compress") -> str:
    return (f"seed 004 on the lab ({app_name}, CPU share 10-100% x threads 1/2/4, "
            f"{fig['runs']} runs, T {fig['T_min_s']:.2f}-{fig['T_max_s']:.2f} s): product form "
            f"mean fractional error {fig['mean_pct']:.1f}%, median {fig['median_pct']:.1f}%; "
            f"leave-one-run-out mean {fig['loo_mean_pct']:.1f}%, "
            f"median {fig['loo_median_pct']:.1f}%")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--app", choices=sorted(SIZE_MB), default="compress")
    p.add_argument("--repeats", type=int, default=3,
                   help="repeats per assignment, T = their median (default 3)")
    p.add_argument("--keep", type=Path, help="write the inventory, store and CSV here")
    a = p.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from conftest import claim_lab_slot  # the lab slots the integration tests use

    from workbench.lab import Lab

    out = a.keep or Path(tempfile.mkdtemp(prefix="nimo-seed004-"))
    out.mkdir(parents=True, exist_ok=True)
    with claim_lab_slot() as (prefix, base):
        lab = Lab(out / "lab", hosts=3, prefix=prefix, subnet_base=base)
        try:
            lab.up()
            csv = run_sweep(lab, out, a.app, a.repeats)
        finally:
            lab.down()
    print(report(figures(csv, out), a.app) + f" (median of {a.repeats} repeats)")
    print(f"(inventory, store and runs in {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
