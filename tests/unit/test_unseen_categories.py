"""Categorical knobs in the honesty warnings: a category no training run held is named in
the campaign's warnings and by ``nimo predict``, which also takes a category by its name."""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

from nimo.campaign.metrics import (
    measured_values,
    recorded_values,
    training_record,
    unseen_categories,
)
from workbench.cli import main
from workbench.exitstatus import model_warnings

VARIANTS = ("blake2b", "md5", "sha512")
WORK = {"blake2b": 2.0, "md5": 1.0, "sha512": 3.0}


def test_categories_no_training_run_held_are_named() -> None:
    training = [{"cpu": 1.0, "variant": 1.0}, {"cpu": 0.5, "variant": 3.0}]
    (u,) = unseen_categories({"variant": VARIANTS}, measured_values(training))
    assert (u.knob, u.unseen) == ("variant", ("md5",))
    assert u.warning().startswith("knob variant: md5 never measured; predictions")
    held = measured_values([*training, {"variant": 2.0}])
    assert unseen_categories({"variant": VARIANTS}, held) == []
    assert unseen_categories({"variant": VARIANTS}, {"cpu": [1.0]}) == []  # knob not held


def test_the_warnings_name_the_category_not_its_code_range() -> None:
    model = {"attributes": [{"name": "cpu", "levels": [0.5, 1.0]},
                            {"name": "variant", "levels": [1.0, 2.0, 3.0],
                             "categories": list(VARIANTS)}]}
    its = [{"run": i + 1, "assignment": a, "status": "done", "purpose": "train"}
           for i, a in enumerate([{"cpu": 0.5, "variant": 1.0}, {"cpu": 1.0, "variant": 2.0}])]
    (warning,) = model_warnings(model, its)
    assert warning.startswith("knob variant: sha512 never measured")
    model["training"] = {"measured_categories": {"variant": [1, 2, 3]}}  # its own record
    assert model_warnings(model, its) == ()


def test_a_record_is_read_knob_by_knob_and_garbled_parts_are_left_out() -> None:
    model = {"training": {"measured_range": {"cpu": [0.5, 1], "mem": "lots", "net": [1, "inf"]}}}
    assert recorded_values(model, "measured_range", ["cpu", "mem", "net", "io"]) == {
        "cpu": [0.5, 1.0]}
    assert recorded_values(model, "measured_categories", ["cpu"]) == {}
    garbled = {"training": {"measured_range": [1, 2]}}
    assert recorded_values(garbled, "measured_range", ["cpu"]) == {}
    assert recorded_values({"training": "none"}, "measured_range", ["cpu"]) == {}
    assert recorded_values(None, "measured_range", ["cpu"]) == {}


def test_the_training_record_is_read_from_a_document_or_a_loaded_model() -> None:
    record = {"far_share": 0.5}
    assert training_record({"training": record}) == record
    assert training_record(SimpleNamespace(training=record)) == record
    for model in (None, {}, {"training": [1]}, SimpleNamespace(training="x"), 3):
        assert training_record(model) == {}, model


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[str, dict]:
    root = tmp_path_factory.mktemp("cats")
    data = root / "variants.csv"
    with data.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["cpu", "variant", "T"])
        for cpu in (0.25, 0.5, 0.75, 1.0):
            for v in VARIANTS:
                w.writerow([cpu, v, 1.0 + WORK[v] / cpu])
    url = f"sqlite:///{root}/nimo.db"
    assert main(["replay", str(data), "--store", url, "--name", "v", "--quiet",
                 "--attributes", "cpu,variant", "--categorical", "variant",
                 "--time-column", "T", "--external-test", "2"]) == 0
    model = root / "m.json"
    assert main(["model", "export", "v", "--store", url, "-o", str(model)]) == 0
    return str(model), json.loads(model.read_text())


def test_the_model_records_categories_and_predict_takes_their_names(exported,
                                                                    capsys) -> None:
    path, doc = exported
    (variant,) = [a for a in doc["attributes"] if a["name"] == "variant"]
    assert variant["categories"] == sorted(VARIANTS)
    assert doc["training"]["measured_categories"]["variant"] == [1, 2, 3]
    assert set(doc["training"]["measured_range"]) == {"cpu"}  # codes have no range
    capsys.readouterr()
    assert main(["predict", path, "cpu=0.5", "variant=sha512"]) == 0
    by_name = capsys.readouterr()
    assert by_name.out.startswith("T = ") and "never measured" not in by_name.err
    for code in ("3", "3.0"):
        assert main(["predict", path, "cpu=0.5", f"variant={code}"]) == 0
        assert capsys.readouterr().out == by_name.out  # the code is the same category
    for bad in ("0", "4", "2.5", "nan", "inf"):
        assert main(["predict", path, "cpu=0.5", f"variant={bad}"]) == 2
        assert "unknown category" in capsys.readouterr().err
    assert main(["predict", path, "cpu=0.5", "variant=sha1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown category 'sha1'" in err and "blake2b" in err


def test_predict_warns_of_a_category_no_training_run_held(exported, tmp_path,
                                                          capsys) -> None:
    _, doc = exported
    doc["training"]["measured_categories"]["variant"] = [1, 2]  # as if sha512 never ran
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["predict", str(path), "cpu=0.5", "variant=sha512"]) == 0
    assert "variant=sha512 was never measured: the prediction is a guess" in (
        capsys.readouterr().err)
    assert main(["predict", str(path), "cpu=0.5", "variant=md5"]) == 0
    assert "never measured" not in capsys.readouterr().err
