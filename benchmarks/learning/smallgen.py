"""Small cloud-configuration sets (30-300 configurations), seeded and deterministic.

Shaped like published cloud-configuration measurements (a job run on clusters of cloud VMs),
not like any data set's values: the `tuning` and `evaluation` suites hold >= 600 assignments
per application, so nothing there looks like a real set of a few dozen cluster
configurations. Each application here is a job on a cluster:

- attributes (3-6): ``family`` (categorical, 2-4 instance families; hidden per-family CPU
  speed, memory per vCPU and network bandwidth; in 40% of the jobs the family is not a
  column and shows only as ``mem_gib_per_node`` next to ``vcpus_per_node``, as cloud
  measurements are often replayed), ``nodes`` (3-10 irregular cluster sizes,
  2-64), usually ``vcpus_per_node`` (2-4 instance sizes), sometimes ``mem_gib_per_node``
  (derived from family and size, as such data sets list it), ``input_gb`` (a load, 2-4
  sizes) and ``storage`` (a second categorical attribute, 2-3 volume types with hidden
  disk rates);
- configurations: a random subset of 30-300 of the full grid (at most 85% of it), half of
  the time favouring a band of total vCPUs (as experimenters pick clusters of comparable
  size);
- physics: one node runs its share of the input with appgen's occupancy model
  (:func:`appgen.occupancies`: compute with clock and Amdahl over the node's cores, network,
  disk, a memory cliff at a working set that shrinks with more nodes when it scales with the
  input, interactions); on top, Amdahl across nodes (a serial driver part) and a
  communication term (a shuffle of part of the data at the node's bandwidth and a
  coordination cost growing with the node count), so time against nodes can turn up;
- noise: per application sigma 1-10%, log-normal on T; one run per configuration mostly
  (30% of applications: 2-3 runs).

The CSV holds the attribute columns and ``T`` only (as real data); categorical columns hold
codes 1..k (replayed with ``--categorical``). ``python -m benchmarks.learning.smallgen SEED``
prints one application.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.learning import appgen

SMALL_VERSION = 2  # bump when the output for a seed changes (cache file names carry it)
MIN_CONFIGS, MAX_CONFIGS = 30, 300
NODE_POOL = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
SIZE_POOL = (2, 4, 8, 16, 32)
MEM_PER_VCPU = (1.0, 2.0, 4.0, 8.0)  # GiB per vCPU: compute / general / memory families
CATEGORICAL = ("family", "storage")
LOAD = ("input_gb",)
ORDER = ("family", "vcpus_per_node", "mem_gib_per_node", "nodes", "storage", "input_gb")


@dataclass(frozen=True)
class SmallApp:
    """One generated job on a small set of cluster configurations."""

    seed: int
    name: str
    attributes: tuple[str, ...]
    levels: dict[str, tuple[float, ...]]
    hidden: dict[str, Any]           # per-level factors and the cluster terms
    params: dict[str, Any]           # appgen's occupancy parameters (one node)
    noise: float
    repeats: int
    assignments: tuple[tuple[float, ...], ...] = field(repr=False)

    @property
    def categorical(self) -> tuple[str, ...]:
        return tuple(a for a in self.attributes if a in CATEGORICAL)

    @property
    def load(self) -> tuple[str, ...]:
        return tuple(a for a in self.attributes if a in LOAD)

    def time(self, point: Mapping[str, float]) -> float:
        """Noiseless T on an assignment (attributes not varied at their fixed value)."""
        return cluster_time(self.hidden, self.params, self.full(point))

    def full(self, point: Mapping[str, float]) -> dict[str, float]:
        """Every input of :func:`cluster_time`: ``point``, the family its memory per vCPU
        names when it has no family column, the rest at their fixed values."""
        h = self.hidden
        v = {"family": 1.0, "vcpus_per_node": float(h["vcpus"]), "nodes": float(h["nodes"]),
             "storage": 1.0, "input_gb": float(h["input_gb"] or self._middle("input_gb"))}
        v.update({k: float(x) for k, x in point.items() if k != "mem_gib_per_node"})
        if "family" not in point and "mem_gib_per_node" in point:  # the family with this
            per_vcpu = point["mem_gib_per_node"] / v["vcpus_per_node"]  # memory per vCPU
            v["family"] = 1.0 + float(np.argmin([abs(math.log(per_vcpu / m))
                                                 for m in h["mem_per_vcpu"]]))
        return v

    def _middle(self, name: str) -> float:
        return self.levels[name][len(self.levels[name]) // 2]

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "name": self.name, "small_version": SMALL_VERSION,
                "generator_version": appgen.GENERATOR_VERSION,
                "attributes": list(self.attributes), "categorical": list(self.categorical),
                "load": list(self.load), "levels": {a: list(v) for a, v in self.levels.items()},
                "hidden": self.hidden, "params": self.params, "noise": self.noise,
                "repeats": self.repeats, "assignments": len(self.assignments)}

    def describe(self) -> str:
        h = self.hidden
        lines = [f"{self.name} (seed {self.seed}): {len(self.attributes)} attributes, "
                 f"{len(self.assignments)} configurations, noise {100 * self.noise:.1f}%, "
                 f"{self.repeats} run(s) each"]
        lines += [f"  {a:<17} " + ", ".join(f"{v:g}" for v in self.levels[a])
                  for a in self.attributes]
        lines.append("  families (speed, GiB/vCPU, Mbit/s per 8 vCPUs): " + "; ".join(
            f"{k + 1}: {s:.2f}, {m:g}, {b:.0f}" for k, (s, m, b) in enumerate(
                zip(h["speed"], h["mem_per_vcpu"], h["bw_per8"], strict=True))))
        lines.append(f"  serial share {h['serial']:.3f}, shuffle share {h['shuffle']:.2f}, "
                     f"coordination {h['coord_s']:.2g} s per node; storage MB/s "
                     + ", ".join(f"{x:.0f}" for x in h["disk"]))
        return "\n".join(lines)


def cluster_time(h: Mapping[str, Any], p: Mapping[str, Any], v: Mapping[str, float]) -> float:
    """T of the job on ``v`` (family, vcpus_per_node, nodes, storage, input_gb) with hidden
    factors ``h`` and appgen occupancy parameters ``p`` for one node."""
    fam, n = int(v["family"]) - 1, max(1.0, v["nodes"])
    cores = v["vcpus_per_node"]
    bw = min(h["bw_per8"][fam] * cores / 8.0, h["bw_per8"][fam] * 2.0)
    node = {e.name: e.default for e in appgen.CATALOGUE}
    node.update(cpu_mhz=h["clock"] * h["speed"][fam], cores=cores, latency_ms=0.3,
                mem_mb=cores * h["mem_per_vcpu"][fam] * 1024.0, bandwidth_mbit=bw,
                disk_mbps=h["disk"][int(v["storage"]) - 1],
                input_mb=v["input_gb"] * 1024.0 / n)
    o_a, o_n, o_d, D = appgen.occupancies(p, node)
    parallel = D * (o_a + o_n + o_d)
    # serial driver work: a share of the whole job's compute, on one node, never split
    whole = {**node, "input_mb": v["input_gb"] * 1024.0, "mem_mb": 1e12}
    s_a, _, _, s_D = appgen.occupancies(p, whole)
    serial = h["serial"] * s_D * s_a
    shuffle = h["shuffle"] * v["input_gb"] * 1024.0 / n * (n - 1) / n * 8.0 / bw
    return parallel + serial + shuffle + h["coord_s"] * n


def _subset(rng: np.random.Generator, pool: tuple[int, ...], lo: int, hi: int) -> list[int]:
    """``lo``-``hi`` distinct values from a random window of ``pool`` (sorted)."""
    k = int(rng.integers(lo, hi + 1))
    start = int(rng.integers(0, len(pool) - k + 1))
    window = pool[start: start + min(len(pool) - start, k + int(rng.integers(0, 4)))]
    return sorted(int(x) for x in rng.choice(window, size=k, replace=False))


def _draw_levels(rng: np.random.Generator) -> tuple[list[str], dict[str, list[float]]]:
    """The varied attributes (3-6) and their levels."""
    if rng.random() < 0.4:  # the family shows only as memory per node (no family column)
        names = ["vcpus_per_node", "mem_gib_per_node", "nodes"]
    else:
        names = ["family", "nodes"]
    if "family" in names and rng.random() < 0.75:
        names.append("vcpus_per_node")
        if rng.random() < 0.5:
            names.append("mem_gib_per_node")
    if rng.random() < 0.5:
        names.append("input_gb")
    if rng.random() < 0.3:
        names.append("storage")
    if len(names) < 3:
        names.append("input_gb" if rng.random() < 0.5 else "vcpus_per_node")
    lv: dict[str, list[float]] = {
        "family": [float(k) for k in range(1, int(rng.integers(2, 5)) + 1)],
        "storage": [float(k) for k in range(1, int(rng.integers(2, 4)) + 1)],
        "vcpus_per_node": [float(x) for x in _subset(rng, SIZE_POOL, 2, 4)],
        "nodes": [float(x) for x in _subset(rng, NODE_POOL, 3, 8)],
    }
    base = math.exp(rng.uniform(math.log(2.0), math.log(500.0)))
    factors = sorted(rng.choice([0.25, 0.5, 1.0, 2.0, 4.0, 8.0], size=int(rng.integers(2, 5)),
                                replace=False))
    lv["input_gb"] = [float(f"{base * f:.3g}") for f in factors]
    return [a for a in ORDER if a in names], lv


def _hidden(rng: np.random.Generator, lv: Mapping[str, list[float]],
            names: list[str]) -> dict[str, Any]:
    k = len(lv["family"])
    h: dict[str, Any] = {
        "clock": float(rng.uniform(2000.0, 3000.0)),
        "speed": [float(x) for x in rng.uniform(0.75, 1.3, size=k)],
        "mem_per_vcpu": [float(f"{x * rng.uniform(0.9, 1.0):.3g}")
                         for x in rng.choice(MEM_PER_VCPU, size=k, replace=False)],
        "bw_per8": [float(x) for x in np.exp(rng.uniform(math.log(500), math.log(10000), k))],
        "disk": [float(x) for x in np.exp(rng.uniform(math.log(50), math.log(1000), 3))],
        "serial": float(rng.uniform(0.002, 0.08)),
        "shuffle": float(rng.uniform(0.0, 0.6)),
        # fixed values of the attributes not varied
        "vcpus": float(rng.choice(lv["vcpus_per_node"])),
        "nodes": float(lv["nodes"][len(lv["nodes"]) // 2]),
        "input_gb": float(rng.choice(lv["input_gb"])) if "input_gb" not in names else 0.0,
    }
    return h


def _configs(rng: np.random.Generator, names: list[str], lv: Mapping[str, list[float]],
             h: Mapping[str, Any]) -> list[tuple[float, ...]]:
    """A random subset of 30-300 of the full grid (often favouring a band of total vCPUs)."""
    axes = _axes(names)
    grid = list(itertools.product(*(lv[a] for a in axes)))
    drawn = round(math.exp(rng.uniform(math.log(MIN_CONFIGS), math.log(MAX_CONFIGS))))
    target = max(MIN_CONFIGS, min(round(0.85 * len(grid)), drawn))  # never the full grid
    w = np.ones(len(grid))
    if rng.random() < 0.5:
        i_n = axes.index("nodes")
        i_c = axes.index("vcpus_per_node") if "vcpus_per_node" in axes else None
        total = np.array([g[i_n] * (g[i_c] if i_c is not None else h["vcpus"]) for g in grid])
        lo = float(np.quantile(np.log(total), rng.uniform(0.0, 0.4)))
        hi = lo + float(np.ptp(np.log(total))) * rng.uniform(0.4, 0.8)
        w = np.where((np.log(total) >= lo) & (np.log(total) <= hi), 1.0, 0.1)
    pick = sorted(rng.choice(len(grid), size=target, replace=False, p=w / w.sum()))
    out = []
    for i in pick:
        point = dict(zip(axes, grid[int(i)], strict=True))
        if "mem_gib_per_node" in names:
            point["mem_gib_per_node"] = float(
                f"{point['vcpus_per_node'] * h['mem_per_vcpu'][int(point['family']) - 1]:.4g}")
        out.append(tuple(float(point[a]) for a in names))
    return out


def _axes(names: list[str]) -> list[str]:
    """The grid's axes: the attributes (memory per node derives from family and size) and
    the family even when it shows only as memory per node."""
    return ["family", *(a for a in names if a not in ("family", "mem_gib_per_node"))]


def make_small_app(seed: int) -> SmallApp:
    """The job drawn from ``seed`` (same seed, same job and configurations, on any machine)."""
    rng = np.random.default_rng([7, SMALL_VERSION, appgen.GENERATOR_VERSION, int(seed)])
    while True:
        names, lv = _draw_levels(rng)
        axes = _axes(names)
        if math.prod(len(lv[a]) for a in axes) >= MIN_CONFIGS / 0.85:
            break
    h = _hidden(rng, lv, names)
    mem_levels = sorted({c * m * 1024.0 for c in lv["vcpus_per_node"]
                         for m in h["mem_per_vcpu"]})
    p = appgen.draw_params(rng, {"mem_mb": mem_levels})
    ref = {"family": 1.0, "vcpus_per_node": h["vcpus"], "nodes": h["nodes"], "storage": 1.0,
           "input_gb": h["input_gb"] or lv["input_gb"][0]}
    h["coord_s"] = 0.0
    h["coord_s"] = float(rng.uniform(0.005, 0.15)) * cluster_time(h, p, ref) / h["nodes"]
    configs = _configs(rng, names, lv, h)
    levels = {a: tuple(sorted({c[i] for c in configs})) for i, a in enumerate(names)}
    noise = float(rng.uniform(0.01, 0.10))
    repeats = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    return SmallApp(int(seed), f"small{int(seed)}", tuple(names), levels, h, p, noise,
                    repeats, tuple(configs))


def rows(app: SmallApp) -> Iterator[dict[str, float]]:
    """Measurement rows (``repeats`` per configuration): attributes and T."""
    rng = np.random.default_rng([7, SMALL_VERSION, int(app.seed), 1])
    for a in app.assignments:
        point = dict(zip(app.attributes, a, strict=True))
        T = app.time(point)
        for _ in range(app.repeats):
            row = {k: (int(x) if k in CATEGORICAL else x) for k, x in point.items()}
            row["T"] = float(f"{T * math.exp(rng.normal(0.0, app.noise)):.8g}")
            yield row


def write_small_app(app: SmallApp, path: str | Path) -> Path:
    """Write the CSV (attributes, T) and ``<path>.json`` describing the job."""
    return appgen.write_csv_and_description(path, [*app.attributes, "T"], rows(app),
                                            app.to_dict())


if __name__ == "__main__":
    job = make_small_app(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(job.describe())
    if len(sys.argv) > 2:
        print(write_small_app(job, sys.argv[2]))
