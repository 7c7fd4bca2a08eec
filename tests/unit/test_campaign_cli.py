"""``nimo campaign|model|plot``: outputs on a real replay campaign, and bad input as one line
with exit 2 and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nimo.model import load_model
from nimo.store import open_store
from workbench.cli import main
from workbench.synthetic import write_all


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("cli")
    write_all(root)
    url = f"sqlite:///{root}/nimo.db"
    for name, csv in (("cpu", "cpu_bound.csv"), ("io", "io_bound.csv")):
        assert main(["replay", str(root / csv), "--store", url, "--name", name, "--quiet",
                     "--external-test", "10", "--json", str(root / f"{name}.json")]) == 0
    return url, root


def test_status_log_list(campaign, capsys) -> None:
    url, root = campaign
    doc = json.loads((root / "cpu.json").read_text())
    capsys.readouterr()
    assert main(["campaign", "status", "cpu", "--store", url]) == 0
    out = capsys.readouterr().out
    assert "status    done" in out and f"done {doc['final']['runs']}" in out
    assert main(["campaign", "log", "cpu", "--store", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + doc["final"]["runs"]
    assert lines[-1].split()[0] == str(doc["iterations"][-1]["run"])
    assert main(["campaign", "list", "--store", url]) == 0
    listed = [line.split()[:3] for line in capsys.readouterr().out.splitlines()[1:]]
    assert listed == [["cpu", "replay", "done"], ["io", "replay", "done"]]


def test_json_document_shape(campaign) -> None:
    _, root = campaign
    doc = json.loads((root / "cpu.json").read_text())
    assert set(doc) >= {"design", "iterations", "stopped_because", "final", "model"}
    assert set(doc["final"]) >= {"external_mape_pct", "acquisition_s", "all_samples_s", "runs"}
    it = doc["iterations"][-1]
    assert set(it) >= {"run", "assignment", "purpose", "predictor", "acquisition_s",
                       "internal_error_pct", "external_mape_pct"}
    assert doc["final"]["external_mape_pct"] == it["external_mape_pct"]
    assert doc["final"]["acquisition_s"] == it["acquisition_s"] < doc["final"]["all_samples_s"]


def test_model_export_matches_the_campaign(campaign, tmp_path, capsys) -> None:
    url, root = campaign
    out = tmp_path / "m.json"
    assert main(["model", "export", "cpu", "--store", url, "-o", str(out)]) == 0
    doc = json.loads((root / "cpu.json").read_text())
    model = load_model(out)
    a = doc["iterations"][0]["assignment"]
    from nimo.model import CostModel

    in_json = CostModel.from_dict(doc["model"])
    assert model.predict(a) == pytest.approx(in_json.predict(a), rel=1e-12)
    # the exported model is the one handed over; its intervals keep the model's own
    # leave-one-out calibration: the external test set that scores it never calibrates it
    assert model.calibration == in_json.calibration
    assert model.calibration["method"] == "loo-studentized"
    assert model.predict_interval(a) == pytest.approx(in_json.predict_interval(a), rel=1e-12)
    with open_store(url) as store:
        n = len(store.models("cpu"))
    assert main(["model", "export", "cpu", "--store", url, "--version", str(n + 5),
                 "-o", str(out)]) == 2
    assert f"no model version {n + 5}" in capsys.readouterr().err


def test_plot_writes_a_png(campaign, tmp_path) -> None:
    url, _ = campaign
    out = tmp_path / "p.png"
    assert main(["plot", "cpu", "io", "--store", url, "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def test_plot_of_a_live_campaign_compares_its_holdout_runs(campaign, tmp_path) -> None:
    """A live campaign has no external test set: its holdout runs are what the predicted vs
    measured panel shows, at the final model's predictions."""
    import dataclasses

    from nimo.model import CostModel
    from nimo.records import RunRequest
    from workbench.cli.plot import _series

    with open_store(campaign[0]) as source:
        model = source.model("cpu").model
        done = [o for o in source.outcomes("cpu").values() if o.ok][:4]
    url = f"sqlite:///{tmp_path}/live.db"
    with open_store(url) as store:
        store.create_campaign("live-like", "live", design={}, spec={"holdout": len(done)})
        holdout = [dataclasses.replace(o, request=RunRequest(i + 1, o.request.assignment,
                                                             "holdout"))
                   for i, o in enumerate(done)]
        store.queue_runs("live-like", [o.request for o in holdout])
        for o in holdout:
            store.record_outcome("live-like", o)
        store.save_model("live-like", len(holdout), model)
        series = _series(store, "live-like")
        points = series["predicted"]
    cm = CostModel.from_dict(model)
    assert points == [(o.sample.T, pytest.approx(cm.predict(dict(o.request.assignment))))
                      for o in holdout]
    assert series["source"] == "holdout runs"
    # each point's 90% interval, as the model would give it to a scheduler
    assert series["intervals"] == [pytest.approx(cm.predict_interval(
        dict(o.request.assignment), 0.90)[1:3]) for o in holdout]
    out = tmp_path / "live.png"
    assert main(["plot", "live-like", "--store", url, "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv", [
    ["campaign", "status", "nope"],
    ["campaign", "log", "nope"],
    ["campaign", "resume", "nope"],
    ["model", "export", "nope", "-o", "x.json"],
    ["plot", "nope"],
])
def test_unknown_campaign(campaign, argv, capsys) -> None:
    url, _ = campaign
    assert main([*argv, "--store", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no campaign named 'nope'" in err and "known: cpu, io" in err


def test_unreachable_store(capsys) -> None:
    url = "postgresql://nimo:hunter2@127.0.0.1:1/nimo"
    assert main(["campaign", "list", "--store", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hunter2" not in err
    assert "cannot open store postgresql://nimo:***@127.0.0.1:1/nimo" in err


def test_bad_input_has_no_traceback(tmp_path) -> None:
    """The same through a real process: exit 2, one line on stderr."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}')
    cases = [
        ["campaign", "status", "nope", "--store", f"sqlite:///{tmp_path}/x.db"],
        ["campaign", "list", "--store", f"sqlite:///{tmp_path}/no/such/dir/x.db"],
        ["predict", str(bad), "cpu_mhz=1"],
    ]
    for argv in cases:
        proc = subprocess.run([sys.executable, "-m", "workbench", *argv], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr


def test_submit_queues_a_replay_campaign(campaign, tmp_path, capsys) -> None:
    _, root = campaign
    url = f"sqlite:///{tmp_path}/q.db"
    assert main(["campaign", "submit", "q1", "--replay", str(root / "io_bound.csv"),
                 "--hosts", "h1,h2", "--external-test", "5", "--store", url]) == 0
    with open_store(url) as store:
        info = store.campaign("q1")
    assert info.status == "queued" and info.spec["hosts"] == ["h1", "h2"]
    assert info.spec["dataset"]["external_test"] == 5 and info.spec["submitted"] is True
    assert main(["campaign", "submit", "q1", "--replay", str(root / "io_bound.csv"),
                 "--store", url]) == 2
    assert "already exists" in capsys.readouterr().err


def test_serve_until_idle_fails_a_bad_csv_once_and_exits_3(tmp_path, capsys, caplog) -> None:
    """A data error would fail again: it is not queued again, and a service that ran out
    of work with a failed campaign does not exit 0."""
    bad = tmp_path / "bad.csv"
    bad.write_text("cpu,T\n1,10\n2,20\n3,x\n4,40\n")
    url = f"sqlite:///{tmp_path}/q.db"
    assert main(["campaign", "submit", "b1", "--replay", str(bad), "--store", url]) == 0
    capsys.readouterr()
    assert main(["serve", "--store", url, "--until-idle"]) == 3
    err = capsys.readouterr().err
    assert "nimo serve: 1 campaign(s) failed: b1 (DataError:" in err
    assert "queued again" not in caplog.text and "b1 failed: DataError" in caplog.text
    assert main(["campaign", "status", "b1", "--store", url, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "failed"


def test_a_served_replay_ends_as_the_same_replay_run_directly(campaign, tmp_path,
                                                                capsys) -> None:
    """`nimo serve` wraps the runner; the replay still learns its external test set and
    calibration split when it starts (they were lost: external error `-`, intervals
    calibrated on leave-one-out residuals)."""
    _, root = campaign
    url = f"sqlite:///{tmp_path}/q.db"
    data = ["--external-test", "10", "--calibration-split", "5"]
    assert main(["campaign", "submit", "q1", "--replay", str(root / "io_bound.csv"),
                 "--hosts", "h1", "--seed", "3", *data, "--store", url]) == 0
    assert main(["serve", "--store", url, "--until-idle"]) == 0
    assert main(["replay", str(root / "io_bound.csv"), "--seed", "3", *data, "--quiet",
                 "--store", url, "--name", "direct"]) == 0
    capsys.readouterr()
    docs = {}
    for name in ("q1", "direct"):
        assert main(["campaign", "status", name, "--store", url, "--format", "json"]) == 0
        docs[name] = json.loads(capsys.readouterr().out)
        assert main(["model", "export", name, "--store", url,
                     "-o", str(tmp_path / f"{name}.json")]) == 0
        capsys.readouterr()
    assert docs["q1"]["external_mape_pct"] is not None
    for key in ("runs", "internal_error_pct", "external_mape_pct"):
        assert docs["q1"][key] == docs["direct"][key], key
    served, direct = (json.loads((tmp_path / f"{n}.json").read_text())["calibration"]
                      for n in ("q1", "direct"))
    assert served == direct and served["method"] == "holdout-studentized"


def test_samples_csv_replays(campaign, tmp_path, capsys) -> None:
    """`nimo campaign samples` writes every measured sample as a CSV that `nimo replay`
    reads back: the same assignments and run times."""
    import csv

    url, _ = campaign
    out = tmp_path / "cpu-samples.csv"
    assert main(["campaign", "samples", "cpu", "--store", url, "-o", str(out)]) == 0
    with open_store(url) as store:
        runs = [r for r in store.runs("cpu") if r.sample is not None]
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == len(runs)
    names = list(runs[0].assignment)
    for row, r in zip(rows, runs, strict=True):
        assert {n: float(row[n]) for n in names} == dict(r.assignment)
        assert float(row["T"]) == pytest.approx(r.sample.T, rel=1e-5)
        assert int(row["run"]) == r.run and row["purpose"] == r.purpose
    capsys.readouterr()
    assert main(["replay", str(out), "--attributes", ",".join(names), "--external-test", "3",
                 "--quiet", "--json", str(tmp_path / "again.json")]) == 0
    assert json.loads((tmp_path / "again.json").read_text())["final"]["runs"] > 0
    assert main(["campaign", "samples", "nope", "--store", url]) == 2


@pytest.mark.parametrize("name", ["", "a\nb", "nl\n", "x" * 5000, "-dash", "with space",
                                  "a/b", "_x"])
def test_a_campaign_name_that_would_break_tables_or_commands_is_refused(
        campaign, tmp_path, capsys, name) -> None:
    _, root = campaign
    url = f"sqlite:///{tmp_path}/n.db"
    assert main(["replay", str(root / "io_bound.csv"), "--store", url, f"--name={name}",
                 "--quiet", "--external-test", "5"]) == 2
    assert main(["campaign", "submit", "--replay", str(root / "io_bound.csv"),
                 "--store", url, "--", name]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all("is not valid (valid: 1-100 letters" in e for e in errors)
    assert all(len(e) < 300 for e in errors)  # a 5,000-character name is not echoed whole
    if Path(f"{tmp_path}/n.db").exists():
        with open_store(url) as store:
            assert store.campaigns() == []


def test_submit_refuses_hosts_the_inventory_does_not_have(tmp_path, capsys) -> None:
    inventory = Path(__file__).resolve().parents[2] / "inventories" / "example.yaml"
    url = f"sqlite:///{tmp_path}/s.db"
    assert main(["campaign", "submit", "q", "--inventory", str(inventory), "--hosts",
                 "compute1,nope", "--store", url]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nimo campaign: error: --hosts: nope not in ") and "\n" not in err
    assert "(valid: " in err and "compute1" in err.split("(valid: ")[1]


def test_a_running_campaign_whose_process_is_gone_is_shown_as_orphaned(tmp_path, capsys):
    """A SIGKILLed campaign stays `running` in the store; status and list say that no live
    process runs it and how to continue, while one with a live owner reads as before."""
    from nimo.records import CampaignStatus
    from workbench.cli.campaign_show import orphaned
    from workbench.ownership import Presence

    url = f"sqlite:///{tmp_path}/o.db"
    with open_store(url) as store:
        store.create_campaign("k", "replay", design={}, seed=1, spec={})
        store.set_status("k", CampaignStatus.RUNNING)
        with Presence(store) as me:
            me.claim("k")
            assert not orphaned(store, store.campaign("k"))
            assert main(["campaign", "list", "--store", url]) == 0
            assert "running " in capsys.readouterr().out
        assert orphaned(store, store.campaign("k"))  # its owner left without finishing
    assert main(["campaign", "list", "--store", url]) == 0
    out = capsys.readouterr().out
    assert "running*" in out and "no live process runs it" in out
    assert main(["campaign", "status", "k", "--store", url]) == 0
    assert "`nimo campaign resume k` continues it" in capsys.readouterr().out
    with open_store(url) as store:
        store.set_status("k", CampaignStatus.DONE)
        assert not orphaned(store, store.campaign("k"))  # over: nothing to continue


@pytest.mark.parametrize("name", ["exp_1.2", "run-2026-11-29", "A", "nimo@host", "a+b:c",
                                  "Ünïcode", "é"])
def test_campaign_names_people_use_are_accepted(name) -> None:
    from nimo.records.campaigns import check_campaign_name

    assert check_campaign_name(name) == name
