"""Median wall time of `nimo --help` and `nimo --version` (target <= 0.3 s: the CLI imports a
subcommand's module only when that subcommand runs).

    python benchmarks/cli_startup.py [--runs 10] [--nimo PATH]

Default: the `nimo` next to this Python (a venv's), else `python -m workbench` from this tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--nimo", default=None, help="the nimo executable to time")
    args = ap.parse_args()
    base = command(args.nimo)
    median_s(base + ["--version"], 1)  # warm the file cache
    for flag in ("--help", "--version"):
        med, worst = median_s(base + [flag], args.runs)
        print(f"{' '.join(base)} {flag}: median {med:.3f} s over "
              f"{args.runs} runs (max {worst:.3f} s); target <= 0.3 s: "
              f"{'ok' if med <= 0.3 else 'MISSED'}")


if __name__ == "__main__":
    main()
