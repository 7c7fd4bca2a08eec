"""Median wall time of `nimo --help`, `nimo --version` and `nimo datasets` (target <= 0.3 s:
the CLI imports a subcommand's module only when that subcommand runs; listing the shipped
files parses no design), and of `nimo predict` on a family model
and on a cost model it builds first (target <= 0.5 s: a scheduler may ask once per job; the
command reads the model file and loads neither the planner nor the store).

    python benchmarks/cli_startup.py [--runs 10] [--nimo PATH]

Default: the `nimo` next to this Python (a venv's), else `python -m workbench` from this tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command(nimo: str | None) -> list[str]:
    if nimo:
        return [nimo]
    beside = Path(sys.executable).with_name("nimo")
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-m", "workbench"]


def median_s(cmd: list[str], runs: int) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times)


def models(base: list[str], where: Path) -> dict[str, Path]:
    """A family model and a cost model of a small scaling curve, built with ``base``."""
    runs = where / "runs.csv"
    runs.write_text("n,T\n" + "".join(f"{n},{5 + 100 / n + r}\n" for n in range(4, 36, 4)
                                      for r in (0.0, 0.1, 0.2)))
    family, cost, store = where / "family.json", where / "cost.json", f"sqlite:///{where}/n.db"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(base + ["model", "fit", str(runs), "--family", "auto", "--attributes", "n",
                           "-o", str(family)], check=True, **quiet)  # type: ignore[call-overload]
    subprocess.run(base + ["replay", str(runs), "--attributes", "n", "--external-test", "2",
                           "--quiet", "--store", store, "--name", "c"], **quiet)  # type: ignore[call-overload]
    subprocess.run(base + ["model", "export", "c", "--store", store, "-o", str(cost)],
                   check=True, **quiet)  # type: ignore[call-overload]
    return {"family model": family, "cost model": cost}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--nimo", default=None, help="the nimo executable to time")
    args = ap.parse_args()
    base = command(args.nimo)
    median_s(base + ["--version"], 1)  # warm the file cache
    for flag in ("--help", "--version", "datasets"):
        med, worst = median_s(base + [flag], args.runs)
        print(f"{' '.join(base)} {flag}: median {med:.3f} s over "
              f"{args.runs} runs (max {worst:.3f} s); target <= 0.3 s: "
              f"{'ok' if med <= 0.3 else 'MISSED'}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, path in models(base, Path(tmp)).items():
            med, worst = median_s(base + ["predict", str(path), "n=12"], args.runs)
            print(f"{' '.join(base)} predict ({kind}): median {med:.3f} s over {args.runs} "
                  f"runs (max {worst:.3f} s); target <= 0.5 s: "
                  f"{'ok' if med <= 0.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
