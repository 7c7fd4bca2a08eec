"""Issue 12, item 5 live on the lab: a model learned on one workbench predicts another's runs
from their measured profiles.

Workbench A is compute1 + storage1 with CPU shares 0.2-0.6 and bandwidth limits 16-100 Mbit/s;
workbench B is compute2 (its own data link to storage1) with levels A never used, including
allotments of one and two whole CPUs (a bigger host). Both run the shipped ``compress`` app
(LZMA of 4 MB of text read over sshfs, single-threaded: CPU and network both matter) with the
resource profile measured (``monitors.profile``). A's samples are exported with
``nimo campaign samples --profile``; ``nimo model fit`` fits the additive ``scaling`` form
(seed 003: per attribute a x + b / x + c / sqrt x, non-negative) on the delivered CPU speed and
bandwidth (``profile_cpu_speed``, ``profile_bandwidth_mbit``), and ``nimo model score`` scores
it on B's exported runs. compress reads, then compresses: its time is a sum of a CPU part and
a network part. The product form (T = prod_j (a_j + b_j / x_j)) was used first; its
cross term extrapolated badly to B's whole CPUs (MAPE 8.9, 18.5, 18.1, 55.9, 37.2, 24.6 and
23.8% in seven sessions, two over the bound); on the last four sessions' runs the additive
form read 8.2, 15.2, 7.1 and 20.6%. A model on the knob columns only
(``cpu_share``, ``rate_mbit``) is scored beside it: it takes two CPUs for twice one CPU, while
the profile measures what one thread gets (at most one CPU, less on a busy host). The profile
is one short measurement per setting, so on this busy machine it can differ from what a run
got; the test asserts the profile model's error bound, not that it always beats the knobs. RTT is
measured too but not an input: no delay is emulated, so it varies only by noise (tens of
microseconds), and a product form on it extrapolates that noise."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import lab_leftovers

pytestmark = [pytest.mark.lab, pytest.mark.slow]

NIMO = [sys.executable, "-m", "workbench"]
SIZE_MB = 4
A_LEVELS: dict[str, list[float]] = {"cpu_share": [0.2, 0.35, 0.6], "rate_mbit": [16, 40, 100]}
# none of A's levels; 1 and 2 whole CPUs for a single-threaded app (a bigger host)
B_LEVELS: dict[str, list[float]] = {"cpu_share": [0.3, 1.0, 2.0], "rate_mbit": [24, 64]}
FAMILY = "scaling"
PROFILE_INPUTS = "profile_cpu_speed,profile_bandwidth_mbit"
KNOB_INPUTS = "cpu_share,rate_mbit"
# Bound on the profile model's MAPE on B. B's runs take 1.4-4 s; this 2-core machine is shared
# (load average 4-5 while measuring), so the CPU a run gets drifts from the one 0.4 s profile
# measurement of its setting (at share 2 it measured 0.89 and 0.39 in two sessions), and B's
# whole-CPU levels lie outside A's range. Measured (additive form) 8.2, 15.2, 7.1 and 20.6%; a
# constant (A's mean time) scored 53-75% on the same B runs.
MAX_PROFILE_MAPE = 30.0


def workbench(lab, tmp_path: Path, name: str, compute: str,
              levels: dict[str, list[float]]) -> Path:
    """The lab's inventory reduced to ``compute`` and the storage host, with compress and
    the resource profile measured."""
    from workbench.apps import APPS

    doc = yaml.safe_load(Path(lab.inventory_path).read_text())
    doc["hosts"] = [h for h in doc["hosts"] if h["role"] == "storage" or h["name"] == compute]
    assert [h["name"] for h in doc["hosts"] if h["role"] == "compute"] == [compute]
    doc["application"] = APPS["compress"].application(SIZE_MB, timeout_s=60)
    doc["application"]["dataset"]["path"] = "xfer-compress"
    doc["knobs"] = [{"kind": kind, "levels": lv} for kind, lv in levels.items()]
    doc["monitors"] = {"sar": False, "tshark": False, "profile": True}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def nimo(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*NIMO, *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (args, proc.stdout + proc.stderr)
    return proc


def measured(inv: Path, tmp_path: Path, url: str, name: str) -> list[dict[str, str]]:
    """Every assignment of the workbench run once, exported with profiles to NAME.csv."""
    nimo("campaign", "run", str(inv), "--design", "baseline-all-samples", "--store", url,
         "--name", name, "--quiet", "--skip-doctor")
    out = tmp_path / f"{name}.csv"
    nimo("campaign", "samples", name, "--store", url, "--profile", "-o", str(out))
    with out.open() as fh:
        return list(csv.DictReader(fh))


def fit_and_score(tmp_path: Path, inputs: str, tag: str) -> dict:
    model = tmp_path / f"{tag}.json"
    nimo("model", "fit", str(tmp_path / "xfer-a.csv"), "--family", FAMILY, "--attributes",
         inputs, "-o", str(model))
    scored = tmp_path / f"{tag}-on-b.json"
    proc = nimo("model", "score", str(model), str(tmp_path / "xfer-b.csv"), "--json",
                str(scored))
    assert "MAPE" in proc.stdout and "xfer-b.csv" in proc.stdout
    return json.loads(scored.read_text())


def test_profile_model_from_workbench_a_scores_workbench_b(lab, tmp_path) -> None:
    import numpy as np

    url = f"sqlite:///{tmp_path / 'nimo.db'}"
    a = measured(workbench(lab, tmp_path, "a", "compute1", A_LEVELS), tmp_path, url, "xfer-a")
    b = measured(workbench(lab, tmp_path, "b", "compute2", B_LEVELS), tmp_path, url, "xfer-b")
    assert len(a) == 9 and len(b) == 6
    for rows, levels in ((a, A_LEVELS), (b, B_LEVELS)):
        for row in rows:  # every run measured its delivered CPU and bandwidth
            assert float(row["cpu_share"]) in levels["cpu_share"]
            # one thread gets at most one CPU; a short bench may burst past a small quota
            assert 0 < float(row["profile_cpu_speed"]) <= 1.25 * min(float(row["cpu_share"]), 1)
            assert 0 < float(row["profile_bandwidth_mbit"]) <= 1.05 * float(row["rate_mbit"])
    assert not {(r["cpu_share"], r["rate_mbit"]) for r in a} & {
        (r["cpu_share"], r["rate_mbit"]) for r in b}

    on_profile = fit_and_score(tmp_path, PROFILE_INPUTS, "profile")
    on_knobs = fit_and_score(tmp_path, KNOB_INPUTS, "knobs")
    mean_a, times_b = np.mean([float(r["T"]) for r in a]), np.array([float(r["T"]) for r in b])
    constant = float(np.mean(np.abs(mean_a - times_b) / times_b) * 100)
    print(f"\nA (compute1, {len(a)} runs) -> B (compute2, {len(b)} runs, levels unused on A): "
          f"MAPE {on_profile['mape_pct']:.1f}% from profiles ({PROFILE_INPUTS}), "
          f"{on_knobs['mape_pct']:.1f}% from knobs ({KNOB_INPUTS}), {constant:.1f}% from "
          f"A's mean time")
    for rp, rk, row in zip(on_profile["records"], on_knobs["records"], b, strict=True):
        print(f"  B cpu_share {row['cpu_share']} (delivered {row['profile_cpu_speed']}) "
              f"rate {row['rate_mbit']} (delivered {row['profile_bandwidth_mbit']}): T "
              f"{rp['T']:.2f}s, profile model {rp['predicted']:.2f}s ({rp['ape_pct']:.1f}%), "
              f"knob model {rk['predicted']:.2f}s ({rk['ape_pct']:.1f}%)")
    assert len(on_profile["records"]) == len(b)
    assert np.isfinite(on_profile["mape_pct"])
    assert on_profile["mape_pct"] <= MAX_PROFILE_MAPE and on_profile["mape_pct"] < constant
    # the profile model sees that two CPUs give a one-thread app one CPU: its inputs for
    # B's cpu_share 2 runs are those of the cpu_share 1 runs, and so are its predictions
    # (within 3% plus however much their delivered CPU speeds differ). The knob model is
    # printed, not asserted: it takes two CPUs for twice one CPU, but whether it then
    # predicts too fast depends on the sign of its fitted linear term (0.76, 0.60, 0.73 of
    # the time on average in three sessions, 1.06 in a fourth)
    by_setting = {(float(row["cpu_share"]), float(row["rate_mbit"])):
                  (rp["predicted"], float(row["profile_cpu_speed"]))
                  for rp, row in zip(on_profile["records"], b, strict=True)}
    for rate in B_LEVELS["rate_mbit"]:
        (one, speed1), (two, speed2) = (by_setting[(share, float(rate))] for share in (1.0, 2.0))
        assert abs(two / one - 1) <= 0.03 + abs(speed2 / speed1 - 1), (rate, one, two)
    # both campaigns took their limits, mounts and probes away, on every host and data link
    assert lab_leftovers(lab) == {}
