"""Synthetic applications for replay: physically motivated occupancy models with noise.

Each application maps a resource assignment (CPU speed, memory, network latency, bandwidth) to
NIMO's occupancies and data flow; a run's T = D x (o_a + o_n + o_d), with multiplicative
log-normal noise per run. ``python -m workbench.synthetic OUTDIR`` writes one CSV per
application (three repeated measurements per assignment) in the replay format.
"""

from __future__ import annotations

import csv
import itertools
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CPU_MHZ = (451.0, 797.0, 930.0, 996.0, 1396.0)           # the paper's five compute nodes
MEM_MB = (64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0)
LATENCY_MS = (0.0, 3.6, 7.2, 10.8, 14.4, 18.0)          # NIST Net round trips 0-18 ms
BANDWIDTH_MBIT = (20.0, 40.0, 60.0, 80.0, 100.0)
ATTRIBUTES = ("cpu_mhz", "mem_mb", "latency_ms", "bandwidth_mbit")
LEVELS = (CPU_MHZ, MEM_MB, LATENCY_MS, BANDWIDTH_MBIT)

Occ = tuple[float, float, float, float]  # o_a, o_n, o_d (s per MB), D (MB)


def _net(lat_ms: float, bw: float, requests_per_mb: float) -> float:
    """Network stall per MB: transfer at the bandwidth plus one round trip per request."""
    return 8.0 / bw + requests_per_mb * lat_ms / 1000.0


def cpu_bound(cpu: float, mem: float, lat: float, bw: float) -> Occ:
    """BLAST-like: heavy compute per MB, small sequential reads (prefetched)."""
    o_a = 2.4 * 1000.0 / cpu
    return o_a, 0.3 * _net(lat, bw, 2.0), 0.02, 300.0


def io_bound(cpu: float, mem: float, lat: float, bw: float) -> Occ:
    """fMRI-like: light compute, many small synchronous reads, so latency and bandwidth rule."""
    o_a = 0.08 * 1000.0 / cpu
    return o_a, _net(lat, bw, 8.0), 0.03, 900.0


def memory_cliff(cpu: float, mem: float, lat: float, bw: float) -> Occ:
    """External sort of a 700 MB working set: ceil(700/mem) merge passes, each re-reading and
    re-writing the data through the network store; fits in memory from 1 GB up."""
    passes = math.ceil(700.0 / mem)
    D = 400.0 * (1 + (passes if passes > 1 else 0))
    o_a = 0.35 * 1000.0 / cpu
    return o_a, _net(lat, bw, 1.0), 0.01, D


def prefetch_interaction(cpu: float, mem: float, lat: float, bw: float) -> Occ:
    """Prefetching hides network latency while the CPU is slow enough: the stall per MB is the
    part of the fetch time not overlapped with compute (a CPU x latency interaction)."""
    o_a = 0.6 * 1000.0 / cpu
    fetch = _net(lat, bw, 40.0)
    return o_a, max(0.0, fetch - o_a) + 0.02, 0.01, 500.0


def saturating(cpu: float, mem: float, lat: float, bw: float) -> Occ:
    """A pipeline whose network share saturates: above ~60 Mbit/s the storage server is the
    bottleneck, so more bandwidth stops helping."""
    o_a = 0.5 * 1000.0 / cpu
    eff_bw = min(bw, 60.0)
    return o_a, _net(lat, eff_bw, 3.0), 0.04, 600.0


@dataclass(frozen=True)
class SyntheticApp:
    name: str
    occupancies: Callable[[float, float, float, float], Occ]
    noise: float = 0.03
    missing_fraction: float = 0.0  # irregular workbench: this share of assignments absent


APPS = (
    SyntheticApp("cpu_bound", cpu_bound),
    SyntheticApp("io_bound", io_bound, missing_fraction=0.2),
    SyntheticApp("memory_cliff", memory_cliff),
    SyntheticApp("prefetch_interaction", prefetch_interaction),
    SyntheticApp("saturating", saturating, noise=0.05),
)


def rows(app: SyntheticApp, seed: int = 0, repeats: int = 3) -> Iterator[dict[str, float]]:
    """Measurement rows (repeats per assignment) in the replay CSV format."""
    rng = np.random.default_rng(seed)
    for point in itertools.product(*LEVELS):
        if app.missing_fraction and rng.random() < app.missing_fraction:
            continue
        o_a, o_n, o_d, D = app.occupancies(*point)
        for _ in range(repeats):
            f = np.exp(rng.normal(0.0, app.noise, size=4))
            a, n, d, dd = o_a * f[0], o_n * f[1], o_d * f[2], D * (1 + (f[3] - 1) / 5)
            T = dd * (a + n + d)
            row = dict(zip(ATTRIBUTES, point, strict=True))
            row.update(T=round(T, 4), D=round(dd, 4), U=round(a / (a + n + d), 6),
                       o_a=round(a, 7), o_n=round(n, 7), o_d=round(d, 7))
            yield row


def write_all(outdir: Path, seed: int = 0) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, app in enumerate(APPS):
        path = outdir / f"{app.name}.csv"
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=[*ATTRIBUTES, "T", "D", "U", "o_a", "o_n", "o_d"])
            w.writeheader()
            w.writerows(rows(app, seed=seed + i))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "datasets/synthetic")):
        print(p)
