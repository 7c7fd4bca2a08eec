"""`nimo campaign list|status|log --format json`, `samples -o` by extension, `campaign
delete`, the never-measured-knob warning, and `nimo predict` input checks (issue 10, items
5, 11 and 12)."""

from __future__ import annotations

import csv
import json
import sys

import pytest

from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from nimo.store import open_store
from workbench.cli import main
from workbench.ownership import Presence
from workbench.synthetic import write_all


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> tuple[str, object]:
    root = tmp_path_factory.mktemp("show")
    write_all(root)
    url = f"sqlite:///{root}/nimo.db"
    assert main(["replay", str(root / "cpu_bound.csv"), "--store", url, "--name", "cpu",
                 "--quiet", "--external-test", "10", "--json", str(root / "cpu.json")]) == 0
    return url, root


def test_list_status_log_as_json(replayed, capsys) -> None:
    url, root = replayed
    doc = json.loads((root / "cpu.json").read_text())
    capsys.readouterr()
    assert main(["campaign", "list", "--store", url, "--format", "json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["name"], listed["kind"], listed["status"], listed["runs"]) == (
        "cpu", "replay", "done", doc["final"]["runs"])
    assert main(["campaign", "status", "cpu", "--store", url, "--format", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["status"] == "done" and st["runs"] == {"done": doc["final"]["runs"]}
    assert st["samples"] == doc["final"]["runs"] and st["warnings"] == []
    assert main(["campaign", "log", "cpu", "--store", url, "--format", "json"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in log] == [r["run"] for r in doc["iterations"]]
    assert log[-1]["internal_error_pct"] == pytest.approx(
        doc["iterations"][-1]["internal_error_pct"])


def test_samples_by_extension(replayed, tmp_path, capsys) -> None:
    url, _ = replayed
    assert main(["campaign", "samples", "cpu", "--store", url, "-o", str(tmp_path / "s.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    import pyarrow.parquet as pq

    assert main(["campaign", "samples", "cpu", "--store", url,
                 "-o", str(tmp_path / "s.parquet")]) == 0
    table = pq.read_table(tmp_path / "s.parquet").to_pydict()
    assert table["run"] == [int(r["run"]) for r in rows]
    assert table["T"] == pytest.approx([float(r["T"]) for r in rows], rel=1e-5)
    capsys.readouterr()
    assert main(["campaign", "samples", "cpu", "--store", url,
                 "-o", str(tmp_path / "s.xlsx")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown format .xlsx" in err and ".parquet" in err
    assert not (tmp_path / "s.xlsx").exists()


def test_parquet_without_pyarrow_or_pandas_names_the_extra(replayed, tmp_path, capsys,
                                                           monkeypatch) -> None:
    url, _ = replayed
    for mod in ("pyarrow", "pyarrow.parquet", "pandas"):
        monkeypatch.setitem(sys.modules, mod, None)
    assert main(["campaign", "samples", "cpu", "--store", url,
                 "-o", str(tmp_path / "s.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs pyarrow" in err
    assert not (tmp_path / "s.parquet").exists()


def _failed(run: int, a: dict[str, float]) -> RunOutcome:
    return RunOutcome(RunRequest(run, a, "train"), RunStatus.FAILED, reason="netem: no qdisc")


def _done(run: int, a: dict[str, float]) -> RunOutcome:
    return RunOutcome(RunRequest(run, a, "train"), RunStatus.DONE, Sample(a, T=2.0 + run))


def test_status_shows_the_errors_of_the_model_handed_over(tmp_path, capsys) -> None:
    """paper-default refits when it stops: the model it hands over is more accurate than the
    one after its last run, and status shows the figures the summary shows."""
    write_all(tmp_path)
    url = f"sqlite:///{tmp_path}/nimo.db"
    out = tmp_path / "p.json"
    assert main(["replay", str(tmp_path / "memory_cliff.csv"), "--store", url, "--name", "p",
                 "--quiet", "--seed", "1", "--design", "paper-default", "--json",
                 str(out)]) == 0
    doc = json.loads(out.read_text())
    final = doc["final"]["external_mape_pct"]
    assert doc["iterations"][-1]["external_mape_pct"] != pytest.approx(final)  # refitted
    capsys.readouterr()
    assert main(["campaign", "status", "p", "--store", url, "--format", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["external_mape_pct"] == pytest.approx(final)
    assert st["internal_error_pct"] == pytest.approx(doc["model"]["training"]["internal_error_pct"])


def test_status_warns_of_a_knob_never_measured(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path}/k.db"
    with open_store(url) as store:
        store.create_campaign("k", "live", design={}, status="running")
        outs = [_done(1, {"cpu": 1.0, "delay": 0.0}), _failed(2, {"cpu": 1.0, "delay": 10.0}),
                _done(3, {"cpu": 0.5, "delay": 0.0}), _failed(4, {"cpu": 0.5, "delay": 5.0})]
        for o in outs:
            store.record_outcome("k", o)
    assert main(["campaign", "status", "k", "--store", url]) == 0
    out = capsys.readouterr().out
    assert ("warning   knob delay was never measured: all 2 runs with delay in {5, 10} "
            "failed") in out
    assert "cpu" not in out.split("warning")[1]
    # `campaign delete` refuses a campaign a live process runs, then deletes it with --force
    with open_store(url) as store, Presence(store) as presence:
        presence.claim("k")
        assert main(["campaign", "delete", "k", "--store", url]) == 2
        assert "is running (run by" in capsys.readouterr().err
        assert main(["campaign", "delete", "k", "--store", url, "--force"]) == 0
    assert "deleted k (live, running, 4 runs)" in capsys.readouterr().out
    with open_store(url) as store:
        assert store.campaigns() == []


def test_delete_takes_a_running_campaign_no_live_process_runs(tmp_path, capsys) -> None:
    """`status` calls it orphaned (killed, or its machine lost): delete needs no --force."""
    url = f"sqlite:///{tmp_path}/o.db"
    with open_store(url) as store:
        store.create_campaign("o", "replay", design={}, status="running")
    assert main(["campaign", "delete", "o", "--store", url]) == 0
    assert "deleted o (replay, running, 0 runs)" in capsys.readouterr().out


def test_status_warns_of_levels_beyond_the_training_runs(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path}/e.db"
    with open_store(url) as store:
        store.create_campaign("e", "live", design={}, status="done")
        for o in (_done(1, {"cpu": 1.0, "mem": 512.0}), _done(2, {"cpu": 0.5, "mem": 256.0})):
            store.record_outcome("e", o)
        store.save_model("e", 2, {"attributes": [
            {"name": "cpu", "levels": [0.5, 1.0]},
            {"name": "mem", "levels": [64.0, 256.0, 512.0]}]})
    assert main(["campaign", "status", "e", "--store", url]) == 0
    out = capsys.readouterr().out
    assert ("warning   knob mem was measured at 256 .. 512 only; predictions at 64 extrapolate"
            in out)
    assert "knob cpu" not in out


def test_predict_refuses_non_finite_and_warns_outside_the_range(replayed, tmp_path,
                                                                capsys) -> None:
    url, _ = replayed
    model = tmp_path / "m.json"
    assert main(["model", "export", "cpu", "--store", url, "-o", str(model)]) == 0
    attrs = json.loads(model.read_text())["attributes"]
    inside = [f"{a['name']}={a['levels'][0]:g}" for a in attrs]
    capsys.readouterr()
    for bad in ("nan", "inf", "-inf", "NaN"):
        argv = ["predict", str(model), f"{attrs[0]['name']}={bad}", *inside[1:]]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "not a finite number" in err
    assert main(["predict", str(model), *inside]) == 0
    assert "outside the learned range" not in capsys.readouterr().err
    top = max(attrs[0]["levels"])
    assert main(["predict", str(model), f"{attrs[0]['name']}={top * 10:g}", *inside[1:]]) == 0
    got = capsys.readouterr()
    assert got.out.startswith("T = ")
    assert f"{attrs[0]['name']}={top * 10:g} is outside the measured range" in got.err


def test_predict_warns_outside_the_measured_range_inside_the_levels(replayed, tmp_path,
                                                                    capsys) -> None:
    url, root = replayed
    model = tmp_path / "m.json"
    assert main(["model", "export", "cpu", "--store", url, "-o", str(model)]) == 0
    doc = json.loads(model.read_text())
    measured = doc["training"]["measured_range"]
    runs = json.loads((root / "cpu.json").read_text())["iterations"]
    fitted = [it["assignment"] for it in runs if it["purpose"] in ("reference", "train")]
    for name, (lo, hi) in measured.items():
        assert (lo, hi) == (min(a[name] for a in fitted), max(a[name] for a in fitted))
    first = doc["attributes"][0]
    name, levels = first["name"], sorted(first["levels"])
    doc["training"]["measured_range"][name] = [levels[0], levels[1]]  # as if measured less
    model.write_text(json.dumps(doc))
    others = [f"{a['name']}={measured[a['name']][0]:g}" for a in doc["attributes"][1:]]
    capsys.readouterr()
    assert main(["predict", str(model), f"{name}={levels[-1]:g}", *others]) == 0
    err = capsys.readouterr().err
    assert (f"{name}={levels[-1]:g} is outside the measured range {levels[0]:g} .. "
            f"{levels[1]:g}") in err
    assert err.count("outside the measured range") == 1


def test_predict_warns_at_a_recorded_level_no_run_held(replayed, tmp_path, capsys) -> None:
    url, _ = replayed
    model = tmp_path / "m.json"
    assert main(["model", "export", "cpu", "--store", url, "-o", str(model)]) == 0
    doc = json.loads(model.read_text())
    first = doc["attributes"][0]
    name, levels = first["name"], sorted(first["levels"])
    doc["training"]["measured_range"][name] = [levels[0], levels[-1]]
    doc["training"]["unmeasured_levels"] = {name: [[levels[1], 0.25]]}  # as if never run
    model.write_text(json.dumps(doc))
    others = [f"{a['name']}={a['levels'][0]:g}" for a in doc["attributes"][1:]]
    capsys.readouterr()
    assert main(["predict", str(model), f"{name}={levels[1]:g}", *others]) == 0
    got = capsys.readouterr()
    assert got.out.startswith("T = ")
    assert f"{name}={levels[1]:g} was never measured (a level between measured ones)" in got.err
    assert main(["predict", str(model), f"{name}={levels[0]:g}", *others]) == 0
    assert "never measured" not in capsys.readouterr().err


def test_predict_falls_back_to_the_levels_when_the_recorded_range_is_garbled(
        replayed, tmp_path, capsys) -> None:
    url, _ = replayed
    model = tmp_path / "m.json"
    assert main(["model", "export", "cpu", "--store", url, "-o", str(model)]) == 0
    doc = json.loads(model.read_text())
    name, top = doc["attributes"][0]["name"], max(doc["attributes"][0]["levels"])
    others = [f"{a['name']}={a['levels'][0]:g}" for a in doc["attributes"][1:]]
    for garbled in ("abc", [1, "x"], {"lo": 1}, None):
        doc["training"]["measured_range"] = {name: garbled}
        model.write_text(json.dumps(doc))
        capsys.readouterr()
        assert main(["predict", str(model), f"{name}={top * 10:g}", *others]) == 0
        assert "is outside the learned range" in capsys.readouterr().err


def test_status_counts_an_interrupted_run_apart_from_the_failed_ones(tmp_path, capsys) -> None:
    """A run cut short by Ctrl-C is run again by a resume: status says interrupted, not
    failed (the store keeps its older form, failed with reason 'interrupted')."""
    url = f"sqlite:///{tmp_path}/i.db"
    with open_store(url) as store:
        store.create_campaign("i", "live", design={}, status="running")
        store.record_outcome("i", _failed(1, {"cpu": 1.0}))
        store.queue_runs("i", [RunRequest(2, {"cpu": 0.5}, "train")])
        store.interrupt_in_flight("i")
    assert main(["campaign", "status", "i", "--store", url, "--format", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["runs"] == {"failed": 1, "interrupted": 1}
    assert [f["run"] for f in st["failed"]] == [1]


def test_list_counts_the_runs_status_counts(tmp_path, capsys) -> None:
    """A killed campaign: 7 runs told, the 8th in flight. `list` and `status` (and
    `delete`) count the same stored runs."""
    url = f"sqlite:///{tmp_path}/q.db"
    with open_store(url) as store:
        store.create_campaign("q", "live", design={}, status="running")
        for run in range(1, 8):
            store.record_outcome("q", _done(run, {"cpu": 1.0 / run}))
        store.queue_runs("q", [RunRequest(8, {"cpu": 0.1}, "train")])
    assert main(["campaign", "status", "q", "--store", url, "--format", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["runs"] == {"done": 7, "queued": 1}
    assert main(["campaign", "list", "--store", url, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["runs"] == 8
    assert main(["campaign", "list", "--store", url]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:2] == ["q", "live"] and row[3] == "8"


def test_samples_of_a_time_only_campaign_replay(tmp_path, capsys) -> None:
    """A campaign over data that records T alone exports no empty D, U, o_* columns (the
    replay reader refuses an empty cell), so its samples replay again."""
    data = tmp_path / "t.csv"
    data.write_text("x,y,T\n" + "".join(f"{x},{y},{10.0 / x + y + 0.01 * x * y}\n"
                                        for x in range(1, 9) for y in range(1, 5)))
    url = f"sqlite:///{tmp_path}/nimo.db"
    assert main(["replay", str(data), "--store", url, "--name", "t", "--quiet",
                 "--external-test", "4"]) in (0, 3)
    out = tmp_path / "s.csv"
    assert main(["campaign", "samples", "t", "--store", url, "-o", str(out)]) == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header[:3] == ["x", "y", "T"] and not {"D", "U", "o_a"} & set(header)
    capsys.readouterr()
    assert main(["replay", str(out), "--attributes", "x,y", "--external-test", "3",
                 "--quiet", "--json", str(tmp_path / "again.json")]) in (0, 3)
    assert json.loads((tmp_path / "again.json").read_text())["final"]["runs"] > 0
