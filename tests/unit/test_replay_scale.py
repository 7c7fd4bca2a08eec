"""Replay's extrapolation protocol, repeat aggregation, categorical columns, the family
model in ``final``, and ``nimo model score|update|fit`` (issue 12)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.records import RunRequest
from workbench.replay import ReplayOptions, ReplayRunner
from workbench.replay_scale import aggregate, parse_bound, pick_index

ROOT = Path(__file__).resolve().parents[2]
BELL = ROOT.parent / "shared" / "datasets" / "bell" / "bell_scaleout_runtimes.csv"


def nimo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def write(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture
def scaling_csv(tmp_path):
    """T = 2 n + 400 / n, three repeats per node count (x1, x1.1, x1.3)."""
    rows = [[n, f, (2 * n + 400 / n) * f] for n in (2, 4, 6, 8, 12, 16, 24, 32)
            for f in (1.3, 1.0, 1.1)]
    return write(tmp_path / "s.csv", ["nodes", "factor", "T"], rows)


def test_bound_parsing():
    b = parse_bound("nodes<=20")
    assert (b.column, b.op, b.value) == ("nodes", "<=", 20.0)
    assert b.inside(20) and not b.inside(24) and str(b) == "nodes<=20"
    assert parse_bound(" x > 1.5 ").inside(2)
    import argparse

    for bad in ("nodes=20", "nodes<=", "<=3", "nodes<=abc"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_bound(bad)


def test_repeat_aggregation():
    assert aggregate([3, 1, 2], "min") == 1 and aggregate([3, 1, 2], "median") == 2
    assert aggregate([3, 1, 2], "mean") == 2 and aggregate([1, 2], None) == 1.5
    assert pick_index([3, 1, 2], "min") == 1 and pick_index([3, 1, 2, 4], "median") == 2
    assert pick_index([3, 1], "mean") is None


@pytest.mark.parametrize(("repeats", "factor"), [
    (None, (1.3 + 1.0 + 1.1) / 3), ("mean", (1.3 + 1.0 + 1.1) / 3), ("min", 1.0),
    ("median", 1.1)])
def test_all_samples_counts_the_repeat_a_run_replays(scaling_csv, repeats, factor):
    """--repeats min replayed the fastest repeat but all-samples summed the means: the
    learning time's share of it read low (75% for every candidate of the bell pagerank)."""
    r = ReplayRunner.open(ReplayOptions(str(scaling_csv), ("nodes",), external_test=2,
                                        repeats=repeats))
    every = sum(2 * n + 400 / n for n in (2, 4, 6, 8, 12, 16, 24, 32))  # withheld ones too
    assert r.all_samples_s == pytest.approx(every * factor)


def test_learning_above_all_samples_says_why_instead_of_a_bare_share(capsys):
    """A run replays one recorded repeat, all-samples counts their mean: with slow repeats
    drawn, learning cost more (bell pagerank: '105.3% of all-samples', read as impossible)."""
    from types import SimpleNamespace

    from workbench.cli.replay import learning_share, replay_summary

    assert learning_share({"acquisition_s": 3600.0, "all_samples_s": 7200.0}) == (
        "learning time 1.00 h = 50.0% of all-samples 2.00 h")
    final = {"acquisition_s": 7560.0, "all_samples_s": 7200.0, "runs": 14,
             "external_mape_pct": 4.4}
    replay_summary({"final": final, "stopped_because": "no candidate assignment left"},
                   SimpleNamespace(problems=[], warnings=[]), "recommended", 1)
    assert capsys.readouterr().out.startswith(
        "design recommended: 14 runs, learning time 2.10 h = 105.0% of all-samples 2.00 h "
        "(more than all-samples: each run replays one recorded repeat, and those drawn here "
        "were slower than the mean T per assignment all-samples counts); external MAPE 4.4% "
        "on 1 ")


def test_extrapolation_trains_inside_and_scores_every_assignment_outside(scaling_csv):
    r = ReplayRunner.open(ReplayOptions(str(scaling_csv), ("nodes",), extrapolate="nodes<=8",
                                        repeats="min"))
    assert sorted(a["nodes"] for a, _ in r.external) == [12, 16, 24, 32]
    assert sorted(v[0] for v in r.space.candidates) == [2, 4, 6, 8]
    T = {a["nodes"]: t for a, t in r.external}
    assert T[12] == pytest.approx(2 * 12 + 400 / 12)  # the fastest repeat
    out = r.run(RunRequest(1, {"nodes": 4.0}, "train"))
    assert out.sample.T == pytest.approx(2 * 4 + 100)
    assert r.spec()["extrapolate"] == "nodes<=8" and r.spec()["repeats"] == "min"
    assert ReplayRunner.from_spec(r.spec()).external == r.external


def test_extrapolation_errors_name_the_problem(scaling_csv):
    with pytest.raises(ConfigError, match="'cores' is not an attribute"):
        ReplayRunner.open(ReplayOptions(str(scaling_csv), ("nodes",), extrapolate="cores<=8"))
    with pytest.raises(ConfigError, match="no assignment .* outside"):
        ReplayRunner.open(ReplayOptions(str(scaling_csv), ("nodes",), extrapolate="nodes<=99"))


def test_default_replay_spec_is_unchanged(scaling_csv):
    spec = ReplayRunner.open(ReplayOptions(str(scaling_csv), ("nodes",), external_test=2)).spec()
    assert not {"extrapolate", "repeats", "categorical"} & set(spec)


def test_categorical_column_codes_in_sorted_order(tmp_path):
    rows = [[n, fam, 10 + 50 / n + {"m4": 3, "c4": 1}[fam]] for n in (1, 2, 4) for fam in
            ("m4", "c4")]
    path = write(tmp_path / "c.csv", ["n", "fam", "T"], rows)
    r = ReplayRunner.open(ReplayOptions(str(path), ("n", "fam"), external_test=1))
    assert r.dataset.categories == {"fam": ("c4", "m4")}
    assert r.categorical == ("fam",) and r.numeric_names == ("n",)
    levels = {a.name: a.levels for a in r.dataset.space.attributes}
    assert levels["fam"] == (1.0, 2.0)
    assert r.row({"n": 2.0, "fam": 2.0}) == {"n": 2.0, "fam": "m4"}
    same = ReplayRunner.open(ReplayOptions(str(path), None, external_test=1,
                                           categorical=("fam",)))
    assert same.dataset.categories == r.dataset.categories


def test_replay_cli_extrapolates_and_reports_the_family(tmp_path):
    design = tmp_path / "d.yaml"
    design.write_text("extends: recommended\nname: fam\n"
                      "predictors: {mode: auto, bounded: true, family: auto}\n")
    out = tmp_path / "r.json"
    proc = nimo("replay", str(BELL), "--where", "job=grep", "--attributes", "nodes",
                "--time-column", "runtime_s", "--extrapolate", "nodes<=20", "--repeats", "min",
                "--design", str(design), "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    final = json.loads(out.read_text())["final"]
    assert final["external_median_ape_pct"] > 0 and final["external_target_error_pct"]["T"]
    fam = final["family"]
    assert fam["training_runs"] == 5 and fam["chosen_by"] == "extrapolate"
    assert fam["honest_error_pct"][fam["name"]] == min(
        v for v in fam["honest_error_pct"].values() if v is not None)
    assert "family " + fam["name"] in proc.stdout
    # 5 training runs: no interval to score on the external runs, and the line says so
    assert fam["external_coverage_90"] is None
    assert "90% interval held - (no interval)" in proc.stdout
    model_path = tmp_path / "m.json"
    model_path.write_text(json.dumps(fam["model"]))
    with open(BELL, newline="") as fh:
        large = [[r["nodes"], r["runtime_s"]] for r in csv.DictReader(fh)
                 if r["job"] == "grep" and int(r["nodes"]) > 20]
    runs = write(tmp_path / "large.csv", ["nodes", "T"], large)
    score = nimo("model", "score", str(model_path), str(runs), "--json", "-")
    assert score.returncode == 0, score.stderr
    doc = json.loads(score.stdout)
    assert len(doc["records"]) == 70
    assert doc["median_ape_pct"] == pytest.approx(
        float(np.median([r["ape_pct"] for r in doc["records"]])))


def test_model_fit_update_and_errors(tmp_path):
    rows = [[p, c, (2 + 30 / p) * (0.5 + 40 / c)] for p in (1, 2, 4) for c in (10, 50, 100)]
    first = write(tmp_path / "a.csv", ["P", "C", "T"], rows[:5])
    rest = write(tmp_path / "b.csv", ["P", "C", "T"], rows[5:])
    both = write(tmp_path / "all.csv", ["P", "C", "T"], rows)
    m, m2, batch = tmp_path / "m.json", tmp_path / "m2.json", tmp_path / "batch.json"
    assert nimo("model", "fit", str(first), "--family", "product", "--attributes", "P,C",
                "-o", str(m)).returncode == 0
    assert nimo("model", "update", str(m), str(rest), "-o", str(m2)).returncode == 0
    assert nimo("model", "fit", str(both), "--family", "product", "--attributes", "P,C",
                "-o", str(batch)).returncode == 0
    s_upd = json.loads(nimo("model", "score", str(m2), str(both), "--json", "-").stdout)
    s_bat = json.loads(nimo("model", "score", str(batch), str(both), "--json", "-").stdout)
    assert s_upd["mape_pct"] < 1e-6 and s_bat["mape_pct"] < 1e-6
    bad = nimo("model", "fit", str(first), "--family", "zz", "--attributes", "P", "-o",
               str(m))
    assert bad.returncode == 2 and "valid: nimo, paper" in bad.stderr
    assert "Traceback" not in bad.stderr
    missing = write(tmp_path / "x.csv", ["P", "T"], [[1, 2]])
    err = nimo("model", "score", str(m), str(missing))
    assert err.returncode == 2 and "no column 'C'" in err.stderr
    same = write(tmp_path / "same.csv", ["P", "C", "T"], [[1, 10, 5.0], [1, 10, 5.5]])
    err = nimo("model", "fit", str(same), "--family", "nimo", "--attributes", "P,C", "-o",
               str(tmp_path / "s.json"))
    assert err.returncode == 2 and "every run holds the same assignment" in err.stderr


def test_a_plain_replay_document_gains_nothing(tmp_path):
    out = tmp_path / "p.json"
    data = ROOT / "datasets" / "synthetic" / "cpu_bound.csv"
    proc = nimo("replay", str(data), "--seed", "1", "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    final = json.loads(out.read_text())["final"]
    assert not {"external_median_ape_pct", "external_target_error_pct", "family"} & set(final)
