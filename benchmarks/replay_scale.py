"""Replay at scale (issue 10, acceptance 5): a 100 MB CSV of 1 million rows.

    PYTHONPATH=. python3 benchmarks/replay_scale.py [--rows 1000000] [--design recommended]

Writes /tmp/nimo-replay-scale/big.csv (once; 4 attributes, 3,360 distinct assignments, ~300
repeated measurements each, occupancy columns, ~105 bytes per row), then runs ``nimo replay``
on it in a child process and prints its wall time and peak memory (``ru_maxrss`` of the child,
``resource.getrusage(RUSAGE_CHILDREN)``), plus the time to read the CSV alone. Target: peak
<= 500 MB. Also checks that a 204-level column without ``--attributes`` is refused at once.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = Path("/tmp/nimo-replay-scale")
LEVELS = {
    "cpu_mhz": (451.0, 797.0, 930.0, 996.0, 1396.0, 1800.0, 2400.0),
    "mem_mb": (256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0),
    "latency_ms": (0.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0),
    "bandwidth_mbit": (20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0,
                       20000.0),
}
TARGET_MB = 500.0


def write_csv(path: Path, rows: int, seed: int = 1) -> Path:
    """``rows`` measurements over the full grid of LEVELS (round-robin), occupancy format."""
    if path.exists() and path.stat().st_size > 0 and path.with_suffix(".rows").exists() \
            and path.with_suffix(".rows").read_text() == str(rows):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    grid = np.array(list(itertools.product(*LEVELS.values())))
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as fh:
        fh.write(",".join([*LEVELS, "T", "D", "U", "o_a", "o_n", "o_d"]) + "\n")
        chunk = 100_000
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            g = grid[(start + np.arange(n)) % len(grid)]
            cpu, mem, lat, bw = g.T
            noise = rng.lognormal(0.0, 0.05, size=(n, 4))
            o_a = 1000.0 / cpu * (1 + 2 * (mem < 1024)) * noise[:, 0]
            o_n = (8.0 / bw + 0.02 * lat) * noise[:, 1]
            o_d = 0.01 * noise[:, 2]
            D = 500.0 * noise[:, 3]
            T = D * (o_a + o_n + o_d)
            U = o_a / (o_a + o_n + o_d)
            fmt = "{:g},{:g},{:g},{:g},{:.12g},{:.12g},{:.8f},{:.12g},{:.12g},{:.12g}\n"
            for r in zip(cpu, mem, lat, bw, T, D, U, o_a, o_n, o_d, strict=True):
                fh.write(fmt.format(*r))
    tmp.replace(path)
    path.with_suffix(".rows").write_text(str(rows))
    return path


def child(argv: list[str]) -> tuple[int, float, float, str]:
    """(exit code, wall s, peak RSS MB of the child, last stderr line) of one nimo command
    in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                          cwd="/tmp")
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # KB on Linux
    tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or [""])[-1]
    return proc.returncode, wall, peak, tail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--design", default="recommended")
    args = ap.parse_args()
    t0 = time.perf_counter()
    csv_path = write_csv(OUT / "big.csv", args.rows)
    size_mb = csv_path.stat().st_size / 1e6
    print(f"{csv_path}: {args.rows} rows, {size_mb:.0f} MB "
          f"(written or reused in {time.perf_counter() - t0:.0f} s)")
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: run the smaller one first
    read = ("-c", "import sys; from workbench.replay import load_dataset; "
            f"ds = load_dataset({str(csv_path)!r}); print(len(ds.runs))")
    code, wall, peak, _ = child(list(read))
    print(f"read only:  exit {code}, {wall:.1f} s, peak {peak:.0f} MB")
    out = OUT / "run.json"
    code, wall, peak, tail = child(["-m", "workbench", "replay", str(csv_path), "--design",
                                    args.design, "--seed", "1", "--quiet", "--json", str(out)])
    print(f"nimo replay --design {args.design}: exit {code}, {wall:.1f} s, peak {peak:.0f} MB "
          f"(target <= {TARGET_MB:.0f} MB: {'ok' if peak <= TARGET_MB else 'OVER'})")
    if code:
        print(f"  {tail}")
    wide = OUT / "wide.csv"
    wide.write_text("id,cpu,T\n" + "".join(f"{i},{1 + i % 3},{10 + i % 7}\n" for i in range(204)))
    code, wall, _, tail = child(["-m", "workbench", "replay", str(wide), "--quiet"])
    print(f"204-level column without --attributes: exit {code} in {wall:.1f} s: {tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
