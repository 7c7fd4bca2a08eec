"""Benchmark suites: generated tuning and evaluation sets (disjoint seeds) and the real data.

- ``tuning``: generated applications from seeds 0-999 (the first ``size``, default 60). Designs
  may be tuned on these.
- ``evaluation``: generated applications from seeds 100000-100999 (first ``size``). Figures are
  quoted from these and from the real data only; never tune on them.
- ``scout``: /work/shared/datasets/scout, one case per workload group, completed runs only,
  attributes nodes, vcpus_per_node, mem_gib_per_node, T = elapsed_time_s (one run each).
- ``bell``: /work/shared/datasets/bell, one case per job, attribute nodes, T = runtime_s
  (7 repeated measurements per scale-out).
- ``tuning-small`` / ``evaluation-small``: small cloud-configuration sets from
  :mod:`benchmarks.learning.smallgen` (30-300 configurations, 3-6 attributes, categorical
  instance families, node counts, input size as a load), seeds 200000-200999 (tune on these)
  and 300000-300999 (quote figures only). Printed like the real suites (MAPE after 10/20/30%
  of the configurations).
- ``scout-load``: Scout by workload and framework over both data sizes (bigdata, huge), with
  ``input_gb`` (the group's median input size) as a fourth attribute replayed as load
  (``--load input_gb``: more = more work). Within one workload group the data size is fixed,
  so ``scout`` has no load column.

Every case is materialised on demand as a replay CSV in a cache directory (default
``$NIMO_BENCH_CACHE`` or /tmp/nimo-bench-cache; never committed). Generated files carry the
generator version in their name, so a changed generator never reads stale files.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.learning import appgen, smallgen

TUNING_SEEDS = range(0, 1000)
EVALUATION_SEEDS = range(100000, 101000)
DEFAULT_SIZE = 60
SMALL_TUNING_SEEDS = range(200000, 201000)
SMALL_EVALUATION_SEEDS = range(300000, 301000)
GENERATED = {"tuning": TUNING_SEEDS, "evaluation": EVALUATION_SEEDS}
SMALL = {"tuning-small": SMALL_TUNING_SEEDS, "evaluation-small": SMALL_EVALUATION_SEEDS}
REAL = ("scout", "bell", "scout-load")
SUITES = (*GENERATED, *SMALL, *REAL)

SHARED = Path(os.environ.get("NIMO_SHARED_DATASETS", "/work/shared/datasets"))
SCOUT_CSV = SHARED / "scout" / "scout_multinode_runtimes.csv"
BELL_CSV = SHARED / "bell" / "bell_scaleout_runtimes.csv"
SCOUT_ATTRIBUTES = ("nodes", "vcpus_per_node", "mem_gib_per_node")


def default_cache() -> Path:
    return Path(os.environ.get("NIMO_BENCH_CACHE", "/tmp/nimo-bench-cache"))


@dataclass(frozen=True)
class Case:
    """One dataset of a suite: a replay CSV with its attribute columns and time column T."""

    suite: str
    name: str
    csv: Path
    attributes: tuple[str, ...]
    kind: str                      # "generated", "small" or "real"
    configurations: int            # distinct assignments
    info: dict[str, Any] = field(default_factory=dict, compare=False)
    load: tuple[str, ...] = ()     # attributes replayed with --load (more = more work)
    categorical: tuple[str, ...] = ()  # attributes replayed with --categorical (codes 1..k)


def suite_seeds(suite: str, size: int = DEFAULT_SIZE) -> list[int]:
    seeds = GENERATED[suite] if suite in GENERATED else SMALL[suite]
    if not 0 < size <= len(seeds):
        raise ValueError(f"suite {suite!r} holds 1-{len(seeds)} applications (asked {size})")
    return list(seeds[:size])


def generated_case(suite: str, seed: int, cache: Path) -> Case:
    spec = appgen.make_app(seed)
    path = cache / suite / f"app-{seed}-v{appgen.GENERATOR_VERSION}.csv"
    if not path.exists() or not path.with_suffix(".json").exists():
        appgen.write_app(spec, path)
    load = tuple(a for a in spec.attributes if appgen.BY_NAME[a].role == "load")
    return Case(suite, spec.name, path, spec.attributes, "generated", len(spec.assignments),
                {"seed": seed, "spec": spec.to_dict()}, load)


def small_case(suite: str, seed: int, cache: Path) -> Case:
    app = smallgen.make_small_app(seed)
    path = cache / suite / (f"small-{seed}-v{appgen.GENERATOR_VERSION}"
                            f".{smallgen.SMALL_VERSION}.csv")
    if not path.exists() or not path.with_suffix(".json").exists():
        smallgen.write_small_app(app, path)
    return Case(suite, app.name, path, app.attributes, "small", len(app.assignments),
                {"seed": seed, "spec": app.to_dict()}, app.load, app.categorical)


def _write_rows(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # two harnesses may share a cache
    with tmp.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    tmp.replace(path)
    return path


def scout_cases(cache: Path, source: Path = SCOUT_CSV) -> list[Case]:
    with source.open(newline="") as fh:
        data = [r for r in csv.DictReader(fh) if r["completed"] == "True"]
    cases = []
    for group in sorted({r["workload_group"] for r in data}):
        rows = [[r[a] for a in SCOUT_ATTRIBUTES] + [r["elapsed_time_s"]]
                for r in data if r["workload_group"] == group]
        path = _write_rows(cache / "scout" / f"{group}.csv", [*SCOUT_ATTRIBUTES, "T"], rows)
        n = len({tuple(r[:-1]) for r in rows})
        cases.append(Case("scout", group, path, SCOUT_ATTRIBUTES, "real", n,
                          {"runs": len(rows)}))
    return cases


def scout_load_cases(cache: Path, source: Path = SCOUT_CSV) -> list[Case]:
    """One case per Scout workload and framework over both data sizes, with the data size as
    a load attribute ``input_gb`` (the median input size of the group, in GB)."""
    with source.open(newline="") as fh:
        data = [r for r in csv.DictReader(fh) if r["completed"] == "True"]
    sizes: dict[str, float] = {}
    for group in {r["workload_group"] for r in data}:
        vals = sorted(float(r["input_size"]) for r in data if r["workload_group"] == group)
        sizes[group] = round(vals[len(vals) // 2] / 1e9, 3)
    cases = []
    for job in sorted({(r["workload"], r["framework"]) for r in data}):
        rows = [[r[a] for a in SCOUT_ATTRIBUTES] + [sizes[r["workload_group"]],
                                                     r["elapsed_time_s"]]
                for r in data if (r["workload"], r["framework"]) == job]
        if len({r[-2] for r in rows}) < 2:
            continue  # one data size only: nothing to learn about the load
        name = "_".join(job)
        attrs = (*SCOUT_ATTRIBUTES, "input_gb")
        path = _write_rows(cache / "scout-load" / f"{name}.csv", [*attrs, "T"], rows)
        n = len({tuple(r[:-1]) for r in rows})
        cases.append(Case("scout-load", name, path, attrs, "real", n, {"runs": len(rows)},
                          ("input_gb",)))
    return cases


def bell_cases(cache: Path, source: Path = BELL_CSV) -> list[Case]:
    with source.open(newline="") as fh:
        data = list(csv.DictReader(fh))
    cases = []
    for job in sorted({r["job"] for r in data}):
        rows = [[r["nodes"], r["runtime_s"]] for r in data if r["job"] == job]
        system = next(r["system"] for r in data if r["job"] == job)
        path = _write_rows(cache / "bell" / f"{job}.csv", ["nodes", "T"], rows)
        n = len({r[0] for r in rows})
        cases.append(Case("bell", job, path, ("nodes",), "real", n,
                          {"runs": len(rows), "system": system}))
    return cases


def load_suite(suite: str, cache: Path | None = None, size: int = DEFAULT_SIZE) -> list[Case]:
    """The cases of ``suite`` (tuning | evaluation | scout | bell), written to ``cache``."""
    cache = Path(cache) if cache is not None else default_cache()
    if suite in GENERATED:
        return [generated_case(suite, s, cache) for s in suite_seeds(suite, size)]
    if suite in SMALL:
        return [small_case(suite, s, cache) for s in suite_seeds(suite, size)]
    if suite == "scout":
        return scout_cases(cache)
    if suite == "bell":
        return bell_cases(cache)
    if suite == "scout-load":
        return scout_load_cases(cache)
    raise ValueError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")


if __name__ == "__main__":
    import sys

    for c in load_suite(sys.argv[1] if len(sys.argv) > 1 else "evaluation"):
        print(json.dumps({"name": c.name, "csv": str(c.csv), "attributes": c.attributes,
                          "configurations": c.configurations}))
