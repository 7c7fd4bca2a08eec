"""A knob whose every varied run failed is never silently dropped: the delivered model marks
it unmeasured (in its JSON too) and ``nimo predict`` warns on every prediction."""

from __future__ import annotations

import json

from campaign_fakes import SPACE, FormulaRunner, true_T

from nimo.campaign.lifecycle import execute, new_campaign
from nimo.model import load_model
from nimo.records import CampaignKind, Sample
from workbench.cli import main

DESIGN = {"name": "random-12", "strategy": "random", "predictors": {"mode": "auto"},
          "stop": {"error_pct": 1, "min_samples": 12, "max_runs": 12}}


def latency_breaks() -> FormulaRunner:
    """Every run with lat > 0 fails (the delay emulation is broken on this workbench)."""
    return FormulaRunner(SPACE, lambda a: "delayer missing" if a["lat"] > 0
                         else Sample(dict(a), T=true_T(a)))


def _delivered_model():
    info = new_campaign(None, CampaignKind.REPLAY, None, DESIGN, 3, {})
    return execute(None, info, latency_breaks()).model


def test_the_model_marks_a_knob_no_successful_run_varied():
    model = _delivered_model()
    assert model.unmeasured == ("lat",)
    back = load_model_from(model.to_dict())
    assert back.unmeasured == ("lat",)


def test_a_fully_measured_model_marks_nothing():
    model = _delivered_model().with_unmeasured(())
    assert model.unmeasured == ()
    assert "unmeasured" not in json.dumps(model.to_dict()["attributes"])


def test_predict_warns_that_it_ignores_the_unmeasured_knob(tmp_path, capsys):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(_delivered_model().to_dict()))
    assert main(["predict", str(path), "cpu=2", "lat=5"]) == 0
    err = capsys.readouterr().err
    assert "lat: never measured (every run that varied it failed)" in err


def load_model_from(doc: dict):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.json"
        path.write_text(json.dumps(doc))
        return load_model(path)


def test_predict_warns_far_from_every_measurement(tmp_path, capsys):
    design = {**DESIGN, "predictors": {"mode": "auto", "bounded": True}}
    info = new_campaign(None, CampaignKind.REPLAY, None, design, 3, {})
    model = execute(None, info, latency_breaks()).model
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model.to_dict()))
    assert main(["predict", str(path), "cpu=2", "lat=0"]) == 0
    assert "far from every measured assignment" not in capsys.readouterr().err
    assert main(["predict", str(path), "cpu=2", "lat=10"]) == 0
    assert "far from every measured assignment" in capsys.readouterr().err
