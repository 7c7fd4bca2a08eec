"""The gradient-boosting baseline of the learning benchmark (issue 9, item 2)."""

from __future__ import annotations

import math
import tempfile
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmarks.learning.metrics import CONFIG_FRACTIONS, GBR

if TYPE_CHECKING:
    from benchmarks.learning.evaluate import Job


def run_gbr(job: Job) -> dict[str, Any]:
    """Gradient boosting on as many random configurations as the marks (one run each),
    scored on the replay's external test set of the same (case, seed)."""
    from sklearn.ensemble import GradientBoostingRegressor

    from benchmarks.learning.evaluate import split_case
    from workbench.replay import external_test_set, load_dataset

    t0 = time.perf_counter()
    rec: dict[str, Any] = {"suite": job.case.suite, "case": job.case.name, "design": GBR,
                           "seed": job.seed, "configurations": job.case.configurations,
                           "exit": 0}
    with tempfile.TemporaryDirectory(prefix="nimo-bench-") as d:
        train, _ = split_case(job, Path(d))
        ds = load_dataset(train, list(job.case.attributes), "T",
                          categorical=job.case.categorical)
    held = external_test_set(ds, job.external, job.seed)
    held_set = set(held)
    pool = [a for a in ds.assignments if a not in held_set]
    rng = np.random.default_rng([job.seed, 31337, zlib.crc32(job.case.name.encode())])
    order = [pool[int(i)] for i in rng.permutation(len(pool))]
    X_ext = np.array(held, dtype=float)
    y_ext = np.array([ds.mean_T(a) for a in held])
    marks = {}
    for f in CONFIG_FRACTIONS:
        k = min(len(order), max(1, math.ceil(f * job.case.configurations)))
        chosen = order[:k]
        X = np.array(chosen, dtype=float)
        y = np.array([ds.runs[a][int(rng.integers(len(ds.runs[a])))].T for a in chosen])
        if k >= 2:
            m = GradientBoostingRegressor(random_state=job.seed).fit(X, y)
            pred = m.predict(X_ext)
        else:
            pred = np.full(len(y_ext), y[0])
        mape = float(np.mean(np.abs(pred - y_ext) / y_ext) * 100.0)
        marks[str(f)] = {"runs": k, "mape": mape, "stopped_before": False}
    rec["marks"] = marks
    rec["wall_s"] = time.perf_counter() - t0
    return rec
