"""Issue 12, acceptance 1: a live campaign on the lab over CPU share, memory, bandwidth and
the dataset's size (a ``dataset_mb`` knob, 4 sizes over a 16x range) with the shipped
``checksum`` app reaches holdout MAPE <= 15% on 10 held-out runs, held-out sizes between the
trained ones included. Each size's dataset is made once on the storage host and every sample
carries its profile."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.lab, pytest.mark.slow]

NIMO = [sys.executable, "-m", "workbench"]
SIZES = [2, 4, 8, 32]
UNSEEN = [3, 16]  # sizes no run trained on, strictly between trained ones
# Bandwidth levels the data path delivers steadily on this shared 2-core lab machine. At the
# former 200 Mbit/s, runs of one setting (0.2-0.7 s) came out 14-59% apart (likely sshfs's ssh,
# outside the run's cgroup, pacing the transfer on a busy host) and the held-out runs inherited
# it (holdout MAPE 12.4, 8.1, 15.5%); at 100 Mbit/s runs of 0.25-0.5 s repeat 1-7% apart.
RATES = [25, 100]


def workload_inventory(lab, tmp_path: Path, sizes: list[float] = SIZES,
                       name: str = "workload") -> Path:
    from workbench.apps import APPS

    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    doc["application"] = APPS["checksum"].application(8, timeout_s=60)
    doc["application"]["dataset"]["path"] = "wl-checksum"
    doc["knobs"] = [{"kind": "cpu_share", "levels": [0.25, 0.5, 1.0]},
                    {"kind": "memory_mb", "levels": [128, 512]},
                    {"kind": "rate_mbit", "levels": RATES},
                    {"kind": "dataset_mb", "levels": sizes}]
    doc["monitors"] = {"sar": False, "tshark": False, "profile": False}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_campaign_over_dataset_size_reaches_holdout_mape(lab, tmp_path) -> None:
    from nimo.records import RunPurpose
    from nimo.store import open_store
    from workbench.exitstatus import drift_confirmed

    inv = workload_inventory(lab, tmp_path)
    design = tmp_path / "design.yaml"
    # the shipped design's own stop target (5%), capped so the test stays short: an easier
    # target stopped some campaigns early on an optimistic internal error (14 runs, 7.2%)
    design.write_text("extends: recommended\nstop: {max_runs: 30}\n")
    url = f"sqlite:///{tmp_path / 'nimo.db'}"
    out = tmp_path / "c.json"
    subprocess.run([*NIMO, "campaign", "run", str(inv), "--holdout", "10", "--design",
                    str(design), "--store", url, "--name", "wl-acc1", "--json", str(out),
                    "--quiet"], check=True, capture_output=True, text=True, timeout=3600)
    doc = json.loads(out.read_text())
    final, internal = doc["final"], doc["iterations"][-1]["internal_error_pct"] or float("nan")
    store = open_store(url)
    try:
        runs = [r for r in store.runs("wl-acc1") if r.sample is not None]
    finally:
        store.close()
    trained = sorted({r.assignment["dataset_mb"] for r in runs
                      if r.purpose is not RunPurpose.HOLDOUT})
    held = [r.assignment["dataset_mb"] for r in runs if r.purpose is RunPurpose.HOLDOUT]
    between = [s for s in held if trained[0] < s < trained[-1]]
    mape, coverage = final["holdout_mape_pct"], final.get("holdout_coverage_90")
    print(f"\nholdout MAPE {mape:.1f}% on {len(held)} held-out runs after {final['runs']} "
          f"runs (internal error {internal:.1f}%, {doc['stopped_because']}; 90% interval "
          f"coverage {'-' if coverage is None else f'{coverage:.0%}'}); trained sizes "
          f"{trained}, held-out sizes {sorted(held)}, {len(between)} strictly between")
    holdout_errors(tmp_path, url, [r for r in runs if r.purpose is RunPurpose.HOLDOUT])
    assert len(held) == 10 and between
    # a drift of the shared machine between learning and the holdout (all holdout runs off
    # one way, and the reference re-run last off the same way) excuses a holdout MAPE above
    # 15% only if the model's shape still holds (as in test_slurm_campaign.py)
    print(f"median off the model {final['holdout_shift_pct']:+.1f}%, recheck "
          f"{final['recheck_drift_pct']:+.1f}%")
    assert mape <= 15.0 or (drift_confirmed(final)
                            and final["holdout_mape_unshifted_pct"] <= 15.0), final
    for r in runs:  # every sample carries its level's dataset profile
        p, mb = r.sample.profile, r.assignment["dataset_mb"]
        assert p["dataset_bytes"] == pytest.approx(mb * 2**20, rel=1e-3)
        assert p["dataset_elements"] == 12
        assert p["dataset_max_element_bytes"] >= p["dataset_avg_element_bytes"] > 0
        assert r.sample.meta["app_output"]["bytes_in"] == p["dataset_bytes"]
    names = [p.name for p in Path(lab.export_dir).iterdir()]  # one dataset per level
    assert {f"wl-checksum-{s}mb" for s in SIZES} <= set(names)
    exported_profiles(tmp_path, url, len(runs))
    unseen_sizes_mape(inv, tmp_path, url)


def holdout_errors(tmp_path: Path, url: str, held: list) -> None:
    """Print each held-out run's error under the exported model (same predictions as the
    scored one: the export only recalibrates intervals), to see where the error comes from."""
    from nimo.model import load_model

    path = tmp_path / "holdout-model.json"
    subprocess.run([*NIMO, "model", "export", "wl-acc1", "--store", url, "-o", str(path)],
                   check=True, capture_output=True, text=True, timeout=120)
    model = load_model(path)
    for r in sorted(held, key=lambda r: tuple(r.assignment.values())):
        p = model.predict(r.assignment)
        a = r.assignment
        print(f"  holdout cpu {a['cpu_share']:g} mem {a['memory_mb']:g} rate "
              f"{a['rate_mbit']:g} size {a['dataset_mb']:g}: T {r.sample.T:6.2f}s predicted "
              f"{p:6.2f}s error {(p - r.sample.T) / r.sample.T * 100:+5.1f}%")


def exported_profiles(tmp_path: Path, url: str, n: int) -> None:
    """``nimo campaign samples --profile``: the dataset profile as model-input columns."""
    import csv

    out = tmp_path / "samples.csv"
    subprocess.run([*NIMO, "campaign", "samples", "wl-acc1", "--store", url, "--profile",
                    "-o", str(out)], check=True, capture_output=True, text=True, timeout=120)
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == n
    for row in rows:
        assert float(row["profile_dataset_bytes"]) == pytest.approx(
            float(row["dataset_mb"]) * 2**20, rel=1e-3)


def unseen_sizes_mape(inv: Path, tmp_path: Path, url: str) -> None:
    """The campaign's exported model on runs with dataset sizes it never saw (3, 16 MB)."""
    import numpy as np

    from nimo.model import load_model
    from nimo.records import RunRequest
    from workbench.executor import open_runner

    model_path = tmp_path / "model.json"
    subprocess.run([*NIMO, "model", "export", "wl-acc1", "--store", url, "-o",
                    str(model_path)], check=True, capture_output=True, text=True, timeout=120)
    model = load_model(model_path)
    doc = yaml.safe_load(inv.read_text())
    doc["knobs"][-1]["levels"] = UNSEEN
    probe = tmp_path / "unseen.yaml"
    probe.write_text(yaml.safe_dump(doc, sort_keys=False))
    rng = np.random.default_rng(12)
    with open_runner(str(probe)) as runner:
        picks = rng.choice(len(runner.space.candidates), size=6, replace=False)
        requests = [RunRequest(900 + i, runner.space.as_dict(runner.space.candidates[int(j)]),
                               "external") for i, j in enumerate(picks)]
        outcomes = runner.run_many(requests)
    assert all(o.ok for o in outcomes), [o.reason for o in outcomes]
    predicted = [model.predict(o.request.assignment) for o in outcomes]
    ape = [abs(p - o.sample.T) / o.sample.T * 100 for p, o in zip(predicted, outcomes, strict=True)]
    sizes = sorted(o.request.assignment["dataset_mb"] for o in outcomes)
    print(f"exported model on {len(ape)} runs of unseen sizes {sizes}: MAPE "
          f"{np.mean(ape):.1f}% (per run {', '.join(f'{a:.0f}' for a in ape)}%)")
    for p, o in zip(predicted, outcomes, strict=True):
        a = o.request.assignment
        print(f"  unseen cpu {a['cpu_share']} mem {a['memory_mb']} rate {a['rate_mbit']} size "
              f"{a['dataset_mb']}: T {o.sample.T:6.2f}s predicted {p:6.2f}s")
    assert set(sizes) == set(UNSEEN) and np.mean(ape) <= 15.0


def test_file_count_knob_makes_and_profiles_each_dataset(lab, tmp_path) -> None:
    """dataset_files: the same size split into 1 or 6 files, each made once, profiled on the
    storage host, and read by the app."""
    from nimo.records import RunRequest
    from workbench.executor import open_runner

    doc = yaml.safe_load(workload_inventory(lab, tmp_path).read_text())
    gen = doc["application"]["dataset"]["generate"]
    gen[gen.index("--files") + 1] = "{files}"
    doc["knobs"] = [{"kind": "cpu_share", "levels": [1.0]}, {"kind": "dataset_mb", "levels": [3]},
                    {"name": "files", "kind": "dataset_files", "levels": [1, 6]}]
    path = tmp_path / "files.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with open_runner(str(path)) as runner:
        outcomes = runner.run_many([
            RunRequest(i + 1, {"cpu_share": 1.0, "dataset_mb": 3, "files": n}, "train")
            for i, n in enumerate((1, 6, 6))])
    assert all(o.ok for o in outcomes), [o.reason for o in outcomes]
    for o, n in zip(outcomes, (1, 6, 6), strict=True):
        p = o.sample.profile
        assert p["dataset_elements"] == n == o.sample.meta["app_output"]["files"]
        assert p["dataset_bytes"] == pytest.approx(3 * 2**20, rel=1e-3)
        assert p["dataset_max_element_bytes"] == pytest.approx(3 * 2**20 / n, rel=1e-3)
    names = {p.name for p in Path(lab.export_dir).iterdir()}
    assert {"wl-checksum-3mb-1f", "wl-checksum-3mb-6f"} <= names
