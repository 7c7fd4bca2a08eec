"""Issue 12, acceptance 4: seed 004's sweep on the lab (CPU share 10-100% x threads, the
shipped compress app with ``--threads``, every assignment once) and its product form.
``nimo model update`` adding the lab runs one at a time equals the batch fit (``nimo model
fit``) of the runs so far to 1e-9 after every added run, relative to the largest predicted
time (a prediction near zero is a difference of large terms, so its own relative error is
not a measure of the update). The figures are printed (the benchmark
benchmarks/scale/seed004_lab.py prints them on a lab of its own, with repeats)."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.lab, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
FIRST = 6  # runs in the first fit; then one run per update


def bench():
    spec = importlib.util.spec_from_file_location(
        "seed004_lab", ROOT / "benchmarks" / "scale" / "seed004_lab.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def subset(rows: list[dict], header: list[str], path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, header)
        w.writeheader()
        w.writerows(rows)
    return path


def test_seed004_sweep_and_incremental_update_equal_batch(lab, tmp_path) -> None:
    from nimo.model.family import load_any
    from workbench.model_runs import read_runs

    b = bench()
    runs_csv = b.run_sweep(lab, tmp_path)
    fig = b.figures(runs_csv, tmp_path)
    print("\n" + b.report(fig))
    assert fig["runs"] == len(b.CPU_SHARES) * len(b.THREADS)
    assert fig["mean_pct"] is not None and fig["mean_pct"] < 50  # the form fits the sweep

    with runs_csv.open() as fh:
        reader = csv.DictReader(fh)
        header, rows = list(reader.fieldnames or []), list(reader)
    attrs = b.ATTRIBUTES.split(",")
    everything = read_runs(runs_csv, attrs)
    model = tmp_path / "m.json"
    b.nimo("model", "fit", str(subset(rows[:FIRST], header, tmp_path / "first.csv")),
           "--family", "product", "--attributes", b.ATTRIBUTES, "-o", str(model))
    worst = 0.0
    for i in range(FIRST, len(rows)):
        one = subset(rows[i:i + 1], header, tmp_path / "one.csv")
        b.nimo("model", "update", str(model), str(one), "-o", str(model))
        batch = tmp_path / "batch.json"
        b.nimo("model", "fit", str(subset(rows[:i + 1], header, tmp_path / "sofar.csv")),
               "--family", "product", "--attributes", b.ATTRIBUTES, "-o", str(batch))
        got = load_any(str(model)).predict(everything.rows)
        want = load_any(str(batch)).predict(everything.rows)
        assert json.loads(model.read_text())["training"]["runs"] == i + 1
        scale = float(np.max(np.abs(want)))
        worst = max(worst, float(np.max(np.abs(got - want))) / scale)
        assert np.allclose(got, want, rtol=0, atol=1e-9 * scale), (i, got, want)
    print(f"incremental update vs batch fit: largest difference {worst:.2e} of the largest "
          f"predicted time, over {len(rows) - FIRST} added runs")
