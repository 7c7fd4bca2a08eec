"""The Gaussian-process residual correction (``predictors.residual``, issue 9 item 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nimo.errors import ConfigError, ModelError
from nimo.model import CostModel
from nimo.model.residual import Hyper, ResidualField
from nimo.planner.crossval import cross_validated
from nimo.planner.learner import Learner
from nimo.predictors import PredictorOptions
from nimo.predictors.residual import choose_hyper, fit_field, log_residuals
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace

MEM = tuple(float(v) for v in range(1, 17))
CPU = (0.25, 0.5, 0.75, 1.0)
LEVELS = [list(MEM), list(CPU)]
TRAIN = np.sort(np.random.default_rng(1).permutation(len(MEM) * len(CPU))[:32])


def cliff_T(mem: np.ndarray, cpu: np.ndarray) -> np.ndarray:
    """A run time whose parametric part is 100/cpu, tripled below 6 units of memory."""
    return 100.0 / cpu * np.where(mem < 6.0, 3.0, 1.0)


def grid() -> np.ndarray:
    return np.array([[m, c] for m in MEM for c in CPU])


def test_the_correction_learns_a_cliff_the_parametric_form_misses() -> None:
    X = grid()[::3]
    T = cliff_T(X[:, 0], X[:, 1])
    parametric = 100.0 / X[:, 1]
    field = fit_field(LEVELS, X, T, parametric)
    assert field is not None
    test = np.array([[2.0, 0.5], [14.0, 0.5], [3.0, 1.0], [12.0, 0.75]])
    truth = cliff_T(test[:, 0], test[:, 1])
    corrected = 100.0 / test[:, 1] * field.factor(test)
    plain_err = np.abs(100.0 / test[:, 1] - truth) / truth
    assert np.all(np.abs(corrected - truth) / truth < 0.5 * plain_err + 0.05)


def test_the_attribute_that_matters_gets_the_shorter_length_scale() -> None:
    X = grid()[::2]
    r = log_residuals(cliff_T(X[:, 0], X[:, 1]), 100.0 / X[:, 1])
    hyper = choose_hyper(LEVELS, X, r)
    assert hyper is not None
    mem_scale, cpu_scale = hyper.lengthscales
    assert mem_scale < cpu_scale


def test_no_correction_without_structure_or_with_too_few_runs() -> None:
    X = grid()[::2]
    assert choose_hyper(LEVELS, X, np.zeros(len(X))) is None
    assert fit_field(LEVELS, X[:4], np.ones(4), np.ones(4) * 2.0) is None
    noise = np.random.default_rng(3).normal(0.0, 0.05, len(X))
    hyper = choose_hyper(LEVELS, X, noise)
    assert hyper is None or hyper.signal < hyper.noise


def test_far_from_every_run_the_correction_fades() -> None:
    X = np.array([[m, 0.5] for m in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)])
    field = ResidualField(LEVELS, X, np.full(6, np.log(2.0)), Hyper((0.05, 0.05), 0.5, 0.01))
    near, far = field.factor(np.array([[3.0, 0.5], [16.0, 1.0]]))
    assert near > 1.8 and abs(far - 1.0) < 1e-6


def cliff_learner(residual: bool) -> Learner:
    space = ResourceSpace((Attribute("mem", MEM), Attribute("cpu", CPU)))
    learner = Learner(space, "direct", (8.0, 0.5),
                      PredictorOptions(bounded=True, residual=residual, final_fit="numpy",
                                       transforms=("identity", "reciprocal", "log")))
    learner.active["f_T"] = ["mem", "cpu"]
    for m, c in grid()[TRAIN]:
        T = float(cliff_T(np.array([m]), np.array([c]))[0])
        learner.add(Sample(assignment={"mem": m, "cpu": c}, T=T))
    learner.refit()
    learner.cv_errors()  # decides whether the model carries the correction
    return learner


@pytest.mark.parametrize("residual", [False, True])
def test_the_burman_corrected_error_is_nearer_the_error_over_unseen_runs(residual) -> None:
    learner = cliff_learner(residual)
    X = np.delete(grid(), TRAIN, axis=0)
    truth = cliff_T(X[:, 0], X[:, 1])
    unseen = float(np.mean(np.abs(learner.model().predict_many(X) - truth) / truth)) * 100
    cv, burman = learner.cv_errors()[0], learner.cv_errors(corrected=True)[0]
    assert cv is not None and burman is not None
    assert abs(burman - unseen) < abs(cv - unseen)


def test_the_learner_keeps_the_correction_only_when_cross_validation_says_so() -> None:
    plain, corrected = cliff_learner(False), cliff_learner(True)
    plain_cv, corrected_cv = plain.cv_errors()[0], corrected.cv_errors()[0]
    assert not plain.use_residual and corrected.use_residual
    assert plain_cv is not None and corrected_cv is not None and corrected_cv < 0.8 * plain_cv
    X = np.delete(grid(), TRAIN, axis=0)
    truth = cliff_T(X[:, 0], X[:, 1])

    def mape(model: CostModel) -> float:
        return float(np.mean(np.abs(model.predict_many(X) - truth) / truth))

    assert mape(corrected.model()) < 0.75 * mape(plain.model())


def test_a_corrected_model_round_trips_through_json_with_its_residuals() -> None:
    model = cliff_learner(True).model()
    d = json.loads(model.to_json())
    assert d["version"] == 4 and len(d["residual"]["residuals"]) == len(d["support"])
    again = CostModel.from_dict(d)
    X = grid()
    np.testing.assert_allclose(again.predict_many(X), model.predict_many(X), rtol=1e-9)
    assert "residual" not in json.loads(cliff_learner(False).model().to_json())


def test_a_design_with_the_correction_needs_the_cross_validated_error() -> None:
    from nimo.planner.design import parse_design

    base = {"predictors": {"bounded": True, "residual": True}}
    assert parse_design({**base, "error": "cv"}).predictors["residual"] is True
    for error in ("cv_corrected", "cv_form", "cv_fixed", "cv_spread", "cv_excess",
                  "cv_spread_blended", "cv_spread_checked"):
        assert parse_design({**base, "error": error}).predictors["residual"] is True
    with pytest.raises(ConfigError, match=r"d.yaml: predictors.residual: needs a cross-valida"
                       r"ted error, one of cv, cv_corrected, cv_form, cv_fixed, cv_spread, "
                       r"cv_excess, cv_spread_blended, cv_spread_checked \(the design has error: "
                       r"loo\)"):
        parse_design({**base, "error": "loo"}, "d.yaml")
    assert parse_design({"predictors": {"bounded": True}, "error": "loo"}).error == "loo"


@pytest.mark.parametrize("damage", [
    lambda d: d["residual"].update(residuals=[0.0]),
    lambda d: d["residual"].update(lengthscales=[1.0]),
    lambda d: d["residual"].update(noise=0.0),
    lambda d: d["residual"].pop("signal"),
    lambda d: d.pop("support"),
])
def test_a_damaged_residual_field_is_a_one_line_model_error(damage) -> None:
    d = json.loads(cliff_learner(True).model().to_json())
    damage(d)
    with pytest.raises(ModelError, match="residual"):
        CostModel.from_dict(d)


def test_the_option_needs_a_bounded_model() -> None:
    assert PredictorOptions.from_dict({"bounded": True, "residual": True}).residual
    with pytest.raises(ConfigError, match="needs predictors.bounded"):
        PredictorOptions.from_dict({"residual": True})
    with pytest.raises(ConfigError, match="true or false"):
        PredictorOptions.from_dict({"bounded": True, "residual": "yes"})
    assert "residual" not in PredictorOptions().to_dict()


def test_a_corrected_model_predicts_with_numpy_alone(tmp_path: Path) -> None:
    path = cliff_learner(True).model().save(tmp_path / "m.json")
    code = ("import sys; from nimo.model import load_model; "
            f"m = load_model({str(path)!r}); print(round(m.predict({{'mem': 2, 'cpu': 0.5}}))); "
            "print(sorted({k.split('.')[0] for k in sys.modules} & {'scipy', 'statsmodels'}))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, check=True).stdout.split("\n")
    assert abs(float(out[0]) - 600.0) < 120.0 and out[1] == "[]"


def test_each_folds_correction_is_fitted_on_that_folds_training_rows_only() -> None:
    X = np.arange(10, dtype=float).reshape(-1, 1)
    y = np.ones(10)
    calls: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    class Twice:
        def predict(self, Xt: np.ndarray) -> np.ndarray:
            return np.full(len(Xt), 2.0)

    def correct(train: np.ndarray, in_fold: np.ndarray, rows: np.ndarray) -> np.ndarray:
        calls.append((train.copy(), in_fold.copy(), rows.copy()))
        return np.where(train[rows], 1.0, 0.5)  # corrects only the rows it did not train on

    (plain, _), predicted, factor, fold_T, fold_factor = cross_validated(
        X, {"f_T": y}, y, lambda p, m: Twice(), lambda parts: parts["f_T"], 5, 0, correct)
    assert len(calls) == 5 and plain == pytest.approx(100.0)
    for train, in_fold, rows in calls:
        assert 0 < train.sum() < train.size and rows.all()
        assert in_fold.shape == (int(train.sum()),)
    np.testing.assert_allclose(predicted * factor, y)  # each run's factor is its fold's
    assert fold_T.shape == fold_factor.shape == (5, 10) and (fold_factor == 1.0).sum() == 40
