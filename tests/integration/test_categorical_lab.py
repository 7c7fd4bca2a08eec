"""Issue 12, items 2 and 3 live on the lab: a campaign over CPU share x the checksum app's hash
algorithm (a categorical ``app_param`` knob of named levels) whose design names
``predictors: {family: auto}``. Each run's argv gets the variant's name (the app reports the
algorithm it ran), the variants differ in time, the result's ``final.family`` is fitted on the
training runs and scored on the holdout runs, and the samples, the JSON and the exported family
model all speak of the variants by name."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = [pytest.mark.lab, pytest.mark.slow]

NIMO = [sys.executable, "-m", "workbench"]
VARIANTS = ["sha3_256", "sha1"]  # sha3_256 costs ~4x the CPU per byte of sha1


def variant_inventory(lab, tmp_path: Path) -> Path:
    from workbench.apps import APPS

    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    doc["application"] = APPS["checksum"].application(24, timeout_s=60)
    doc["application"]["dataset"]["path"] = "cat-checksum"
    doc["application"]["command"] += ["--algorithm", "{variant}"]
    doc["knobs"] = [{"kind": "cpu_share", "levels": [0.2, 0.3, 0.4, 0.6, 0.8, 1.0]},
                    {"name": "variant", "kind": "app_param", "levels": VARIANTS}]
    doc["monitors"] = {"sar": False, "tshark": False, "profile": False}
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_campaign_over_a_categorical_variant_reports_its_family(lab, tmp_path) -> None:
    from nimo.store import open_store

    inv = variant_inventory(lab, tmp_path)
    design = tmp_path / "design.yaml"
    design.write_text("extends: recommended\nstop: {max_runs: 8}\n"
                      "predictors: {family: auto}\n")
    url = f"sqlite:///{tmp_path / 'nimo.db'}"
    out = tmp_path / "c.json"
    proc = subprocess.run([*NIMO, "campaign", "run", str(inv), "--holdout", "4", "--design",
                           str(design), "--store", url, "--name", "cat-live", "--json", str(out),
                           "--quiet", "--skip-doctor"], capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert doc["categories"] == {"variant": ["sha1", "sha3_256"]}
    assert {it["assignment"]["variant"] for it in doc["iterations"]} <= set(VARIANTS)
    with open_store(url) as store:
        runs = [r for r in store.runs("cat-live") if r.sample is not None]
    trained = doc["final"]["runs"]
    assert len(runs) == trained + 4 + 1 and trained >= 6  # 4 holdout runs, then the recheck
    assert [str(r.purpose) for r in runs][-5:] == ["holdout"] * 4 + ["recheck"]
    for r in runs:  # the store keeps the code; the app ran the named algorithm
        assert r.sample.meta["app_output"]["algorithm"] == (
            "sha1", "sha3_256")[int(r.assignment["variant"]) - 1]
    family = doc["final"]["family"]
    honest = {k: None if v is None else round(v, 1)
              for k, v in family["honest_error_pct"].items()}
    print(f"\nplanner holdout MAPE {doc['final']['holdout_mape_pct']:.1f}%; family "
          f"{family['name']} (chosen by {family['chosen_by']}) on {family['training_runs']} "
          f"runs: holdout MAPE {family['holdout_mape_pct']:.1f}%, honest errors {honest}")
    assert family["training_runs"] == trained and family["holdout_mape_pct"] is not None
    assert f"cat-live: family {family['name']}" in proc.stdout
    samples_and_family_export(tmp_path, url, len(runs))
    variants_differ_in_time(inv)


def samples_and_family_export(tmp_path: Path, url: str, n: int) -> None:
    from nimo.model.family import load_any, predict_rows

    out = tmp_path / "samples.csv"
    subprocess.run([*NIMO, "campaign", "samples", "cat-live", "--store", url, "-o", str(out)],
                   check=True, capture_output=True, text=True, timeout=120)
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == n and {r["variant"] for r in rows} <= set(VARIANTS)
    model_path = tmp_path / "family.json"
    subprocess.run([*NIMO, "model", "export", "cat-live", "--family", "--store", url, "-o",
                    str(model_path)], check=True, capture_output=True, text=True, timeout=120)
    model = load_any(model_path)
    predicted = predict_rows(model, [{"cpu_share": 0.2, "variant": v} for v in VARIANTS])
    measured = [float(r["T"]) for r in rows]
    assert np.all(predicted > 0) and np.all(predicted < 10 * max(measured))


def variants_differ_in_time(inv: Path) -> None:
    """The same CPU share with each variant: the costlier hash takes clearly longer."""
    from nimo.records import RunRequest
    from workbench.executor import open_runner

    with open_runner(str(inv)) as runner:
        outcomes = runner.run_many([
            RunRequest(900 + i, {"cpu_share": 0.2, "variant": float(code)}, "external")
            for i, code in enumerate((1, 2) * 4)])  # the fastest of 4 each: a 0.3 s run jitters
    assert all(o.ok for o in outcomes), [o.reason for o in outcomes]
    T = {name: min(o.sample.T for o in outcomes if o.request.assignment["variant"] == code)
         for code, name in ((1.0, "sha1"), (2.0, "sha3_256"))}
    algorithms = {o.sample.meta["app_output"]["algorithm"] for o in outcomes}
    print(f"cpu_share 0.2, 24 MB: T sha1 {T['sha1']:.2f} s, sha3_256 {T['sha3_256']:.2f} s")
    assert algorithms == {"sha1", "sha3_256"}
    assert T["sha3_256"] > 1.25 * T["sha1"]  # 24 MB at 0.2 CPU: ~1.45x measured
