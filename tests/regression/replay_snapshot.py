"""Snapshot of ``nimo replay --json`` for every design preset on the shipped datasets.

Recorded once from a known-good commit and checked after any change that must leave the
learning behaviour unchanged (same runs in the same order, same figures to 1e-9)::

    python tests/regression/replay_snapshot.py record [--presets a,b] [--seeds 1,2,3]
    python tests/regression/replay_snapshot.py check  [--presets a,b] [--seeds 1,2,3]

``--datasets lab/checksum,...`` limits either to those shipped datasets (a re-recorded
dataset's cases are recorded again alone).

Each case runs the real CLI (``workbench.cli.main``) in a worker process; a case that exits
with a user error is recorded as its exit code and one-line message.

One snapshot serves every machine (``replay_snapshot.json.gz``): since session 54 the term
selection resolves its ties by order (``nimo.predictors.prior.first_best``) instead of by the
last bits of a sum, and the paper presets replay identically on the Haswell and SkylakeX
kernels (before, 64 of 324 cases took other paths between them, and a CPU of another make
with the same kernel failed CI). The Gaussian-process designs still differ between kernels
in the 7th digit: ``recommended`` is checked for the same runs in the same order with its
figures within ``GP_TOLERANCE`` (``check --tolerance``). Should a kernel ever need its own
figures, ``record --per-kernel`` writes ``replay_snapshot.KERNEL.json.gz`` (KERNEL as
OpenBLAS names it), which then takes precedence on that kernel; ``OPENBLAS_CORETYPE=Haswell``
runs the Haswell kernel on a newer CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import math
import sys
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATASETS = (
    "datasets/synthetic/cpu_bound.csv",
    "datasets/synthetic/io_bound.csv",
    "datasets/synthetic/memory_cliff.csv",
    "datasets/synthetic/prefetch_interaction.csv",
    "datasets/synthetic/saturating.csv",
    "datasets/lab/checksum.csv",
)
SEEDS = (1, 2, 3)
# Presets later work may change on purpose; the rest are the paper's and must not move.
NOT_PAPER = ("recommended", "recommended-gp", "recommended-physical", "baseline-random",
             "baseline-all-samples")
TOLERANCE = 1e-9
# The Gaussian-process designs fit their processes with L-BFGS over sums whose last bits
# differ between BLAS kernels and numpy's SIMD levels: the same runs in the same order, the
# figures within 2e-5 (relative) of each other on Haswell, SkylakeX and AVX2-only numpy.
GP_TOLERANCE = 1e-4
VOLATILE = frozenset({"created_at"})  # wall-clock stamps, not behaviour


def all_presets() -> list[str]:
    return sorted(p.stem for p in (ROOT / "designs").glob("*.yaml"))


def paper_presets() -> list[str]:
    return [p for p in all_presets() if p not in NOT_PAPER]


def case_key(preset: str, dataset: str, seed: int) -> str:
    return f"{preset}|{dataset}|{seed}"


def run_case(key: str) -> tuple[str, dict[str, Any]]:
    """Run one replay through the CLI; the JSON document or the error it ended with."""
    from workbench.cli import main

    preset, dataset, seed = key.split("|")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        argv = ["replay", str(ROOT / dataset), "--design", preset, "--seed", seed,
                "--json", str(out), "--quiet"]
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:
                code = int(e.code or 0)
        if code != 0 or not out.exists():
            return key, {"exit": code, "error": err.getvalue().strip()}
        return key, {"exit": 0, "doc": json.loads(out.read_text())}


def run_cases(keys: Sequence[str], workers: int = 2) -> dict[str, dict[str, Any]]:
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(run_case, keys, chunksize=1))


def differences(expected: Any, actual: Any, path: str = "",
                tolerance: float = TOLERANCE) -> Iterable[str]:
    """Where ``actual`` differs from ``expected`` (numbers within ``tolerance``, relative;
    everything else exactly)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in sorted((set(expected) | set(actual)) - VOLATILE):
            if k not in actual or k not in expected:
                yield f"{path}/{k}: only in {'expected' if k in expected else 'actual'}"
            else:
                yield from differences(expected[k], actual[k], f"{path}/{k}", tolerance)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            yield f"{path}: length {len(expected)} -> {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            yield from differences(e, a, f"{path}[{i}]", tolerance)
    elif _number(expected) and _number(actual):
        if not _close(float(expected), float(actual), tolerance):
            yield f"{path}: {expected!r} -> {actual!r}"
    elif expected != actual:
        yield f"{path}: {expected!r} -> {actual!r}"


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _close(e: float, a: float, tolerance: float = TOLERANCE) -> bool:
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    return abs(e - a) <= tolerance * max(1.0, abs(e), abs(a))


def blas_kernel() -> str:
    """The kernel numpy's BLAS runs on here (OpenBLAS's core type), or its library's name."""
    import numpy  # noqa: F401  (loads the BLAS threadpoolctl reports)
    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return str(info.get("architecture") or info.get("internal_api") or "unknown")
    return "unknown"


COMMON = Path(__file__).with_name("replay_snapshot.json.gz")


def kernel_path(kernel: str | None = None) -> Path:
    """Where a snapshot of ``kernel`` alone (default: this machine's) is kept."""
    return Path(__file__).with_name(f"replay_snapshot.{kernel or blas_kernel()}.json.gz")


def snapshot_path(kernel: str | None = None) -> Path:
    """The snapshot that holds on ``kernel`` (default: this machine's): its own where one was
    recorded, else the common one."""
    own = kernel_path(kernel)
    return own if own.exists() else COMMON


class NoSnapshot(Exception):
    """No snapshot was recorded."""


def load_snapshot(path: Path | None = None) -> dict[str, dict[str, Any]]:
    path = path or snapshot_path()
    if not path.exists():
        recorded = sorted(p.name for p in path.parent.glob("replay_snapshot*.json.gz"))
        raise NoSnapshot(f"no snapshot {path.name} (BLAS kernel {blas_kernel()}; recorded: "
                         f"{', '.join(recorded) or 'none'}): record one from a known-good "
                         "commit with 'python tests/regression/replay_snapshot.py record'")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def save_snapshot(cases: dict[str, dict[str, Any]], path: Path | None = None) -> None:
    path = path or snapshot_path()
    text = json.dumps(dict(sorted(cases.items())), sort_keys=True, separators=(",", ":"))
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text)


def keys_for(presets: Sequence[str], seeds: Sequence[int],
             datasets: Sequence[str] = DATASETS) -> list[str]:
    return [case_key(p, d, s) for p in presets for d in datasets for s in seeds]


def pick_datasets(names: str | None) -> list[str]:
    """The shipped datasets named (``lab/checksum`` or its path), every one without names."""
    if not names:
        return list(DATASETS)
    wanted = [n.strip().removeprefix("datasets/").removesuffix(".csv") for n in names.split(",")]
    unknown = [n for n in wanted if f"datasets/{n}.csv" not in DATASETS]
    if unknown:
        valid = ", ".join(d.removeprefix("datasets/").removesuffix(".csv") for d in DATASETS)
        raise SystemExit(f"--datasets: unknown {', '.join(unknown)}; valid: {valid}")
    return [f"datasets/{n}.csv" for n in wanted]


def check(keys: Sequence[str], workers: int = 2, tolerance: float = TOLERANCE
          ) -> dict[str, list[str]]:
    """Per case, the differences from the snapshot (empty when unchanged)."""
    expected = load_snapshot()
    missing = [k for k in keys if k not in expected]
    actual = run_cases([k for k in keys if k in expected], workers)
    return {**{k: list(differences(v, actual[k], tolerance=tolerance))[:5]
               for k, v in expected.items() if k in actual},
            **{k: ["not in the snapshot (record it)"] for k in missing}}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", choices=("record", "check"))
    p.add_argument("--presets", help="comma-separated (default: every preset)")
    p.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    p.add_argument("--datasets", help="comma-separated, e.g. lab/checksum (default: all)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--tolerance", type=float, default=TOLERANCE,
                   help="check: relative tolerance of the figures (default %(default)g)")
    p.add_argument("--per-kernel", action="store_true",
                   help="record: this BLAS kernel's own snapshot, not the common one")
    args = p.parse_args(argv)
    presets = args.presets.split(",") if args.presets else all_presets()
    keys = keys_for(presets, [int(s) for s in args.seeds.split(",")],
                    pick_datasets(args.datasets))
    if args.action == "record":
        cases = run_cases(keys, args.workers)
        path = kernel_path() if args.per_kernel else COMMON
        if path.exists():
            cases = {**load_snapshot(path), **cases}
        save_snapshot(cases, path)
        print(f"recorded {len(keys)} cases in {path.relative_to(ROOT)}")
        return 0
    try:
        diffs = check(keys, args.workers, args.tolerance)
    except NoSnapshot as e:
        print(e, file=sys.stderr)
        return 2
    changed = {k: v for k, v in diffs.items() if v}
    for k, v in changed.items():
        print(f"CHANGED {k}:", *v, sep="\n  ")
    print(f"{len(diffs) - len(changed)} unchanged, {len(changed)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
