"""`nimo replay`, `nimo design pb`, `nimo predict`: real runs and bad input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workbench.replay import ReplayRunner, load_dataset, open_replay

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets" / "synthetic" / "cpu_bound.csv"
SCOUT = ROOT.parent / "shared" / "datasets" / "scout" / "scout_multinode_runtimes.csv"


def nimo(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=300)


def assert_user_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_replay_writes_the_documented_json(tmp_path):
    out = tmp_path / "run.json"
    proc = nimo("replay", str(DATA), "--seed", "1", "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["design"]["name"] == "recommended"
    it = doc["iterations"]
    assert it and {"run", "assignment", "purpose", "predictor", "acquisition_s",
                   "internal_error_pct", "external_mape_pct"} <= set(it[0])
    assert {i["purpose"] for i in it} <= {"pbdf", "reference", "test", "train"}
    final = doc["final"]
    assert final["runs"] == len(it)
    assert final["acquisition_s"] == pytest.approx(it[-1]["acquisition_s"])
    assert final["all_samples_s"] > final["acquisition_s"]
    assert final["external_mape_pct"] < 10.0
    assert doc["stopped_because"]
    assert doc["model"]["format"] == "nimo-cost-model"
    assert "external MAPE" in proc.stdout


def test_json_into_a_fifo_is_written_through_not_replaced(tmp_path):
    """``--json /dev/null`` (as root) must never replace the device with a file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    proc = nimo("replay", str(DATA), "--seed", "1", "--json", str(fifo), "--quiet")
    reader.join(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and json.loads(got[0])["model"]["format"] == "nimo-cost-model"


def test_replay_with_a_paper_preset_and_predict_from_its_model(tmp_path):
    out = tmp_path / "run.json"
    proc = nimo("replay", str(DATA), "--design", "paper-default", "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["iterations"][0]["purpose"] == "pbdf"
    model = tmp_path / "model.json"
    model.write_text(json.dumps(doc["model"]))
    pred = nimo("predict", str(model), "cpu_mhz=930", "mem_mb=512", "latency_ms=7.2",
                "bandwidth_mbit=60")
    assert pred.returncode == 0, pred.stderr
    assert pred.stdout.startswith("T = ") and "interval" in pred.stdout
    assert_user_error(nimo("predict", str(model), "cpu_mhz=930"), "missing value", "mem_mb")
    assert_user_error(nimo("predict", str(model), "gpu=1"), "unknown attribute 'gpu'")


def test_design_pb_prints_the_paper_matrix():
    proc = nimo("design", "pb", "--factors", "7", "--foldover")
    assert proc.returncode == 0
    rows = proc.stdout.strip().splitlines()
    assert rows[0] == "X1,X2,X3,X4,X5,X6,X7"
    assert rows[1] == "+1,+1,+1,-1,+1,-1,-1"
    assert rows[-1] == ",".join(["+1"] * 7)
    assert len(rows) == 17


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_bad_csv_inputs_give_one_line_and_exit_2(tmp_path):
    empty = write(tmp_path, "empty.csv", "")
    assert_user_error(nimo("replay", empty), "empty.csv", "empty file")
    no_t = write(tmp_path, "no_t.csv", "cpu,mem\n1,2\n")
    assert_user_error(nimo("replay", no_t), "no_t.csv:1", "'T'")
    bad = write(tmp_path, "bad.csv", "cpu,mem,T\n1,2,3\n1,x,4\n")
    assert_user_error(nimo("replay", bad, "--attributes", "cpu,mem"), "bad.csv:3", "'mem'")
    ragged = write(tmp_path, "ragged.csv", "cpu,T\n1,2\n3\n")
    assert_user_error(nimo("replay", ragged), "ragged.csv:3")
    assert_user_error(nimo("replay", str(DATA), "--attributes", "gpu"), "attribute 'gpu'")
    assert_user_error(nimo("replay", str(DATA), "--external-test", "5000"),
                      "external test", "--external-test N with N at most")
    assert_user_error(nimo("replay", str(tmp_path / "missing.csv")), "cannot read")
    gap = write(tmp_path, "gap.csv", "cpu,,lat,T\n1,2,3,4\n2,3,4,5\n")
    assert_user_error(nimo("replay", gap), "gap.csv:1", "column 2 has no name")
    one = write(tmp_path, "one.csv", "cpu,T\n1,4\n1,5\n")
    assert_user_error(nimo("replay", one), "one.csv", "one distinct assignment", "nothing varies")
    occ = "cpu,T,D,o_a,o_n,o_d\n1,4,{},1,1,1\n2,5,1,1,{},1\n"
    for d, o_n in (("-5", "1"), ("0", "1"), ("1", "-0.5")):
        neg = write(tmp_path, "neg.csv", occ.format(d, o_n))
        assert_user_error(nimo("replay", neg), "neg.csv:", "D must be > 0 and o_a, o_n, o_d >= 0")
    trailing = write(tmp_path, "trailing.csv", "cpu,T,\n1,4,\n2,5,\n3,6,\n")
    assert nimo("replay", trailing, "--quiet").returncode == 0  # a trailing comma is fine


def test_bad_designs_give_one_line_and_exit_2(tmp_path):
    unknown_key = write(tmp_path, "d1.yaml", "sampler: lmax_i1\n")
    assert_user_error(nimo("replay", str(DATA), "--design", unknown_key), "d1.yaml", "sampler")
    unknown_name = write(tmp_path, "d2.yaml", "traversal: zigzag\n")
    assert_user_error(nimo("replay", str(DATA), "--design", unknown_name), "zigzag",
                      "round_robin")
    malformed = write(tmp_path, "d3.yaml", "stop: {error_pct: 5\n")
    assert_user_error(nimo("replay", str(DATA), "--design", malformed), "d3.yaml:",
                      "malformed YAML")
    assert_user_error(nimo("replay", str(DATA), "--design", "no-such-preset"), "presets")


def test_repeated_measurements_are_replayed_deterministically():
    runner, external = open_replay(str(DATA), seed=5, external_test=10)
    assert len(external) == 10
    held = {tuple(a.values()) for a, _ in external}
    assert not held & set(runner.space.candidates)
    again = ReplayRunner.from_spec(runner.spec())
    assert again.space.candidates == runner.space.candidates
    from nimo.records import RunRequest
    a = runner.space.as_dict(runner.space.candidates[3])
    picks = {runner.run(RunRequest(r, a, "train")).sample.T for r in range(1, 40)}
    assert len(picks) > 1  # three recorded repeats per assignment
    assert runner.run(RunRequest(7, a, "train")).sample.T == again.run(
        RunRequest(7, a, "train")).sample.T


def test_occupancies_are_derived_from_U_and_D_when_absent(tmp_path):
    path = write(tmp_path, "ud.csv", "cpu,T,U,D\n1,100,0.25,50\n2,60,0.5,50\n")
    ds = load_dataset(path)
    assert ds.kind == "occupancy"
    s = ds.runs[(1.0,)][0]
    assert s.o_a == pytest.approx(0.5) and s.o_n == pytest.approx(1.5) and s.o_d == 0.0


@pytest.mark.skipif(not SCOUT.exists(), reason="../shared/datasets/scout not beside the repo")
def test_scout_replay_learns_time_directly(tmp_path):
    out = tmp_path / "scout.json"
    proc = nimo("replay", str(SCOUT), "--attributes", "nodes,vcpus_per_node,mem_gib_per_node",
                "--time-column", "elapsed_time_s", "--where", "completed=True",
                "--where", "workload_group=join_bigdata_spark", "--external-test", "15",
                "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["model"]["kind"] == "direct"
    assert doc["final"]["external_mape_pct"] is not None


def test_small_data_withholds_a_fifth_by_default_and_says_how_many(tmp_path):
    """30 external assignments of 48 would leave the planner 18: a fifth (9) is withheld."""
    bandwidths = (10, 20, 50, 100, 200, 500, 1000, 2000)
    rows = ["cpu,bw,T"] + [f"{c},{b},{100 / c + 1000 / b:.3f}"
                           for c in (1, 2, 4, 8, 16, 32) for b in bandwidths]
    small = write(tmp_path, "small.csv", "\n".join(rows) + "\n")
    out = tmp_path / "run.json"
    proc = nimo("replay", small, "--seed", "1", "--quiet", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "on 9 assignments" in proc.stdout
    assert "Warning" not in proc.stderr
    asked = nimo("replay", small, "--seed", "1", "--quiet", "--external-test", "30")
    assert asked.returncode == 0 and "on 30 assignments" in asked.stdout
