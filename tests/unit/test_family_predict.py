"""`nimo predict` reads a family model (docs/campaigns.md says so; it had refused every one
as "not a NIMO cost model"): a prediction (with an interval when cross-validation chose the
family), categories by name, bad input in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nimo.errors import ModelError
from nimo.families import fit_family
from workbench.cli import main


@pytest.fixture
def family_model(tmp_path):
    rows = [{"cpu": c, "disk": d} for c in (1.0, 2.0, 4.0, 8.0) for d in ("hdd", "ssd")]
    T = [10.0 / r["cpu"] * (3.0 if r["disk"] == "hdd" else 1.0) + 1.0 for r in rows]
    model = fit_family("knn", rows, T, numeric=["cpu"], categorical=["disk"])
    path = tmp_path / "family.json"
    path.write_text(json.dumps(model.to_dict()))
    return path, model


def test_predict_prints_a_family_models_point_prediction(family_model, capsys):
    path, model = family_model
    assert main(["predict", str(path), "cpu=2", "disk=ssd"]) == 0
    expected = float(model.predict([{"cpu": 2.0, "disk": "ssd"}])[0])
    assert capsys.readouterr().out.strip() == (
        f"T = {expected:.4g} s  (family knn: a point prediction, no interval: it was fitted "
        "without cross-validation (nimo model fit --no-cv, or a model written before named "
        "families were cross-validated))")
    # a category's code, as `nimo predict` takes it for a cost model
    assert main(["predict", str(path), "cpu=2", "disk=2"]) == 0
    assert capsys.readouterr().out.strip().startswith(f"T = {expected:.4g} s")


@pytest.mark.parametrize(("values", "message"), [
    (["cpu=2"], "missing value for disk"),
    (["cpu=2", "disk=nvme"], "disk: unknown category 'nvme' (valid: hdd, ssd (or codes 1..2))"),
    (["cpu=2", "disk=ssd", "disk=hdd"], "disk given twice"),
    (["cpu=fast", "disk=ssd"], "cpu"),
    (["cpu=2", "disk=ssd", "ram=4"], "unknown attribute 'ram'"),
])
def test_bad_values_for_a_family_model_are_one_line_errors(family_model, capsys, values,
                                                           message):
    path, _ = family_model
    assert main(["predict", str(path), *values]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nimo predict: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_a_stored_replays_family_model_exports_and_predicts(tmp_path, capsys):
    """`nimo model export --family` on a replay had said its design names no family: the
    replay's family model was only in its --json output."""
    from workbench.synthetic import write_all

    write_all(tmp_path)
    design = tmp_path / "fam.yaml"
    design.write_text("extends: recommended\nname: fam\n"
                      "predictors: {mode: auto, bounded: true, family: knn}\n")
    url = f"sqlite:///{tmp_path}/f.db"
    assert main(["replay", str(tmp_path / "cpu_bound.csv"), "--design", str(design),
                 "--seed", "1", "--quiet", "--store", url, "--name", "f1",
                 "--json", str(tmp_path / "f1.json")]) == 0
    out = tmp_path / "family.json"
    assert main(["model", "export", "f1", "--family", "-o", str(out), "--store", url]) == 0
    doc = json.loads((tmp_path / "f1.json").read_text())
    assert json.loads(out.read_text()) == doc["final"]["family"]["model"]
    capsys.readouterr()
    names = doc["final"]["family"]["model"]["encoder"]["numeric"]
    assert main(["predict", str(out), *(f"{n}=1000" for n in names)]) == 0
    # the design names the family, but its campaign chose it by cross-validation all the same
    doc_interval = doc["final"]["family"]["model"]["training"].get("interval")
    said = capsys.readouterr().out
    runs = doc["final"]["family"]["training_runs"]
    assert (doc_interval is not None) == (runs >= 19)
    assert ("90% interval" in said) == (runs >= 19)
    assert runs >= 19 or "no interval: too few out-of-fold errors for one" in said
    assert "family knn" in said


def test_a_family_that_cannot_be_fitted_is_a_warning_in_the_replay_summary(tmp_path, capsys):
    """A fixed family that cannot fit the data (product's reciprocal terms and a latency of
    0 ms) printed a KeyError traceback in place of the summary's last lines."""
    from workbench.synthetic import write_all

    write_all(tmp_path)
    design = tmp_path / "fam.yaml"
    design.write_text("extends: recommended\nname: fam\n"
                      "predictors: {mode: auto, bounded: true, family: product}\n")
    assert main(["replay", str(tmp_path / "cpu_bound.csv"), "--design", str(design),
                 "--seed", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert ("design fam: warning: family product not fitted: family product: attribute "
            "'latency_ms' must be > 0") in out


def test_a_served_replay_fits_its_family_as_a_direct_one_does(tmp_path, capsys):
    """The family was added by the replay CLI only: a replay run by `nimo serve` had no
    `family_result`, and `model export --family` refused it."""
    from workbench.synthetic import write_all

    write_all(tmp_path)
    design = tmp_path / "fam.yaml"
    design.write_text("extends: recommended\nname: fam\n"
                      "predictors: {mode: auto, bounded: true, family: knn}\n")
    url = f"sqlite:///{tmp_path}/f.db"
    data = str(tmp_path / "cpu_bound.csv")
    assert main(["campaign", "submit", "q1", "--replay", data, "--design", str(design),
                 "--hosts", "h1", "--seed", "1", "--store", url]) == 0
    assert main(["serve", "--store", url, "--until-idle"]) == 0
    assert main(["replay", data, "--design", str(design), "--seed", "1", "--quiet",
                 "--store", url, "--name", "direct"]) == 0
    exported = []
    for name in ("q1", "direct"):
        out = tmp_path / f"{name}.json"
        assert main(["model", "export", name, "--family", "-o", str(out), "--store", url]) == 0
        exported.append(json.loads(out.read_text()))
    assert exported[0] == exported[1]
    assert exported[0]["encoder"]["numeric"]


def test_a_corrupt_cost_model_is_named_as_one_not_as_a_wrong_format(family_model, tmp_path,
                                                                    capsys):
    from nimo.model.family import load_any

    with pytest.raises(ModelError) as newer:
        load_any(_cost_doc(tmp_path, version=99))
    assert "written by a newer NIMO" in str(newer.value)
    assert "nimo-family-model" not in str(newer.value)
    with pytest.raises(ModelError, match="not a NIMO cost model.*nimo-family-model"):
        load_any(_cost_doc(tmp_path, format="onnx"))


def _cost_doc(tmp_path, **fields):
    from test_cost_model import occupancy_model

    path = tmp_path / "m.json"
    path.write_text(json.dumps({**occupancy_model()[0].to_dict(), **fields}))
    return path


def test_predict_warns_outside_a_family_models_measured_range(family_model, capsys):
    path, model = family_model
    assert model.training["measured_range"] == {"cpu": [1.0, 8.0]}
    assert main(["predict", str(path), "cpu=4", "disk=ssd"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["predict", str(path), "cpu=99", "disk=ssd"]) == 0
    assert ("warning: cpu=99 is outside the measured range 1 .. 8: the prediction is an "
            "extrapolation") in capsys.readouterr().err


def test_an_update_widens_the_measured_range() -> None:
    rows = [{"p": p} for p in (1.0, 2.0, 4.0)]
    model = fit_family("ernest", rows, [10.0 / r["p"] + 1 for r in rows], numeric=["p"])
    wider = model.update([{"p": 16.0}], np.array([10.0 / 16 + 1]))
    assert wider.training["measured_range"] == {"p": [1.0, 16.0]}


@pytest.mark.parametrize(("family", "far"), [("knn", "mem"), ("loglog2", "cpu")])
def test_a_knob_near_the_float_limit_predicts_without_numpy_warnings(tmp_path, capsys, family,
                                                                    far):
    """A knob at 1e300 leaked numpy's overflow warnings (loglog2: exp; knn: the squared
    distance on a linear axis, whose NaN was then held at the fastest run / 4). Now: the
    extrapolation warning only, and knn answers with the limit's neighbours."""
    import warnings

    mems = (0.0, 1.0, 2.0) if family == "knn" else (0.5, 1.0, 2.0)  # knn: mem linear (a 0)
    rows = [{"cpu": c, "mem": m} for c in (1.0, 2.0, 4.0, 8.0) for m in mems]
    T = [10.0 / r["cpu"] + r["mem"] + 1.0 for r in rows]
    model = fit_family(family, rows, T, numeric=["cpu", "mem"])
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model.to_dict()))
    values = {"cpu": "2", "mem": "1", far: "1e300"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["predict", str(path), *(f"{k}={v}" for k, v in values.items())]) == 0
    out, err = capsys.readouterr()
    lo, hi = model.training["measured_range"][far]
    assert err.strip().splitlines() == [
        f"nimo predict: warning: {far}=1e+300 is outside the measured range {lo:g} .. {hi:g}: "
        "the prediction is an extrapolation"]  # fitted once: no interval to call too narrow
    predicted = float(out.split()[2])
    assert np.isfinite(predicted) and predicted > 0
    if family == "knn":  # the neighbours of the limit: among the runs at mem=2, not a hold
        assert predicted >= min(t for r, t in zip(rows, T, strict=True) if r["mem"] == 2.0)
