"""Corrupt cost-model files, ``nimo predict`` edge cases and ``nimo plot -o``: one line naming
what is wrong (exit 2), honest output, no numpy warnings on the terminal."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nimo.errors import ModelError
from nimo.model import CostModel, FittedPredictor, load_model
from nimo.model.features import Term
from workbench.cli import main
from workbench.synthetic import write_all

NAMES = ("cpu", "mem")
ATTRS = [{"name": "cpu", "levels": [500.0, 1000.0, 2000.0]},
         {"name": "mem", "levels": [256.0, 512.0]}]
REF = {"cpu": 1000.0, "mem": 512.0}
OK = ["cpu=1000", "mem=512"]


def bounded_model() -> CostModel:
    """T = 50 (1 + 1 / z_cpu), held in [10, 500], with known variances and a support."""
    pred = FittedPredictor(target="T", attribute_names=NAMES, attributes=("cpu",),
                           reference=(1000.0,), scale=(1000.0,), y_ref=100.0, y_scale=50.0,
                           terms=(Term.main("cpu", "reciprocal"),), params=np.array([1.0, 1.0]),
                           cov=np.array([[0.01, -0.005], [-0.005, 0.01]]), resid_var=0.01, dof=8)
    return CostModel(ATTRS, REF, "direct", {"T": pred}, bounds=(10.0, 500.0),
                     support=[[500.0, 256.0], [1000.0, 512.0], [2000.0, 256.0]])


def saved(tmp_path: Path, edit: Any = None, model: CostModel | None = None) -> Path:
    doc = (model or bounded_model()).to_dict()
    if edit is not None:
        edit(doc)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))  # allows NaN: a hand-edited or foreign file
    return path


def one_error(capsys: pytest.CaptureFixture[str], status: int) -> str:
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- 1. corrupt model files -------------------------------------------------------------
def test_support_rows_of_the_wrong_width_name_the_field(tmp_path: Path, capsys) -> None:
    path = saved(tmp_path, lambda d: d.update(support=[[1, 2, 3]]))
    with pytest.raises(ModelError, match=r"bad field 'support' \(each row must have 2 finite "
                                         r"numbers: cpu, mem\)"):
        load_model(path)
    for bad in ([[1]], [1, 2], [["a", 2]], "12", [[1, float("nan")]]):
        with pytest.raises(ModelError, match="bad field 'support'"):
            load_model(saved(tmp_path, lambda d, b=bad: d.update(support=b)))
    err = one_error(capsys, main(["predict", str(saved(tmp_path, lambda d: d.update(
        support=[[1, 2, 3]]))), *OK]))
    assert "bad field 'support'" in err and "cpu, mem" in err


def test_an_unknown_kind_is_named_before_the_fields_it_governs(tmp_path: Path, capsys) -> None:
    def weird(d: dict[str, Any]) -> None:
        d.update(kind="weird", part_bounds={"T": [1.0, 2.0]})

    with pytest.raises(ModelError, match=r"bad field 'kind' \('weird'; must be one of: "
                                         r"occupancy, direct\)"):
        load_model(saved(tmp_path, weird))
    err = one_error(capsys, main(["predict", str(saved(tmp_path, weird)), *OK]))
    assert "'kind'" in err and "part_bounds" not in err


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_parameter_is_refused_at_load(tmp_path: Path, capsys, value) -> None:
    path = saved(tmp_path, lambda d: d["predictors"]["T"]["params"].__setitem__(1, value))
    with pytest.raises(ModelError, match=r"bad field 'predictors\.T\.params' \(non-finite "
                                         r"parameter params\[1\]"):
        load_model(path)
    status = main(["predict", str(path), *OK])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1 and "predictors.T.params" in err


def test_an_infinite_covariance_entry_is_refused_but_null_is_unknown(tmp_path: Path) -> None:
    inf = saved(tmp_path, lambda d: d["predictors"]["T"]["cov"][0].__setitem__(1, float("inf")))
    with pytest.raises(ModelError, match=r"'predictors\.T\.cov' \(infinite entry cov\[0\]\[1\]"):
        load_model(inf)
    # the project's own files still load: a constant predictor's unknown covariance is null
    const = CostModel(ATTRS, REF, "direct", {"T": FittedPredictor.constant("T", 42.0, NAMES)})
    back = load_model(const.save(tmp_path / "c.json"))
    assert back.predict(REF) == pytest.approx(42.0)
    assert load_model(bounded_model().save(tmp_path / "b.json")).predict(REF) == pytest.approx(100)


# -- 3. nimo predict edge cases ---------------------------------------------------------
def test_an_attribute_given_twice_is_refused(tmp_path: Path, capsys) -> None:
    path = saved(tmp_path)
    err = one_error(capsys, main(["predict", str(path), "cpu=1000", "cpu=500", "mem=512"]))
    assert "cpu given twice" in err


@pytest.mark.parametrize("cpu", ["1e-308", "1e308"])
def test_extreme_values_raise_no_numpy_warnings(tmp_path: Path, cpu: str) -> None:
    model = bounded_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning fails the test
        p = model.predict_interval({"cpu": float(cpu), "mem": 512.0})
        model.predict_many(np.array([[float(cpu), 512.0]]))
    assert 10.0 <= p.mean <= 500.0


def test_an_interval_that_cannot_be_computed_is_said_in_words(tmp_path: Path, capsys) -> None:
    path = saved(tmp_path)
    assert main(["predict", str(path), "cpu=1e-308", "mem=512"]) == 0  # a bounded time
    out, err = capsys.readouterr()
    assert "90% interval unavailable: the model's variance is not a finite number" in out
    assert "nan" not in out.lower() and "RuntimeWarning" not in err
    const = CostModel(ATTRS, REF, "direct", {"T": FittedPredictor.constant("T", 42.0, NAMES)})
    assert main(["predict", str(const.save(tmp_path / "c.json")), *OK]) == 0
    out = capsys.readouterr().out
    assert "interval unavailable: a predictor's variance is unknown" in out and "nan" not in out
    assert main(["predict", str(path), *OK]) == 0
    assert math.isfinite(float(capsys.readouterr().out.split("interval ")[1].split()[0]))


# -- 2. nimo plot -o --------------------------------------------------------------------
@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("plot")
    write_all(root)
    url = f"sqlite:///{root}/nimo.db"
    assert main(["replay", str(root / "cpu_bound.csv"), "--store", url, "--name", "c",
                 "--quiet"]) == 0
    return url


def test_plot_refuses_an_unsupported_format_in_one_line(tmp_path: Path, capsys) -> None:
    out = tmp_path / "p.xyz"
    err = one_error(capsys, main(["plot", "c", "--store", f"sqlite:///{tmp_path}/none.db",
                                  "-o", str(out)]))
    assert str(out) in err and "'xyz'" in err and "png" in err and "pdf" in err
    assert not out.exists()


def test_plot_refuses_a_directory(tmp_path: Path, capsys) -> None:
    err = one_error(capsys, main(["plot", "c", "--store", f"sqlite:///{tmp_path}/none.db",
                                  "-o", str(tmp_path)]))
    assert f"-o {tmp_path}: is a directory" in err
    assert not (tmp_path.parent / f"{tmp_path.name}.png").exists()


def test_plot_reports_the_file_it_wrote(store: str, tmp_path: Path, capsys) -> None:
    capsys.readouterr()
    for given, written in (("pnoext", "pnoext.png"), ("p.PDF", "p.PDF")):
        assert main(["plot", "c", "--store", store, "-o", str(tmp_path / given)]) == 0
        assert capsys.readouterr().out.strip() == f"wrote {tmp_path / written}"
        assert (tmp_path / written).stat().st_size > 1000
    assert (tmp_path / "p.PDF").read_bytes()[:5] == b"%PDF-"
    assert not (tmp_path / "pnoext").exists()
