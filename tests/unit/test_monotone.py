"""The monotone bound (``predictors.monotone``): a predicted T held within kappa of the runs
an assignment has more or less of, while the runs themselves agree (tuning gen483 seed 2:
a form fitted where the large memory met only the fast disk predicted the slow disk with
the most memory 22x too slow)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from nimo.errors import ConfigError, ModelError
from nimo.model import CostModel, load_model
from nimo.model.monotone import KAPPA, covers, monotone_bound, signs_of
from nimo.planner.learner import Learner
from nimo.predictors import PredictorOptions
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace
from tests.unit.test_cost_model import occupancy_model

# mem (capacity), input (load), variant (categorical)
ATTRS = [{"name": "mem", "direction": 1}, {"name": "input", "direction": -1},
         {"name": "variant", "direction": 1, "categories": ["a", "b"]}]
RUNS = np.array([[4.0, 10.0, 1.0], [1.0, 10.0, 1.0], [4.0, 40.0, 2.0]])
T = np.array([100.0, 130.0, 400.0])


def test_signs_read_capacity_load_and_unordered_attributes() -> None:
    np.testing.assert_array_equal(signs_of(ATTRS), [1.0, -1.0, 0.0])


def test_covers_needs_more_capacity_less_load_and_the_same_category() -> None:
    X = np.array([[8.0, 10.0, 1.0], [8.0, 20.0, 1.0], [8.0, 10.0, 2.0]])
    out = covers(X, RUNS, signs_of(ATTRS))
    assert out[0].tolist() == [True, True, False]  # more memory, same input and variant
    assert out[1].tolist() == [False, False, False]  # more input than runs 0 and 1
    assert out[2].tolist() == [False, False, True]  # variant b: only the run on b


def test_limits_hold_a_row_near_the_runs_it_has_more_or_less_of() -> None:
    bound = monotone_bound(RUNS, T, signs_of(ATTRS))
    assert bound is not None
    X = np.array([[8.0, 10.0, 1.0], [1.0, 40.0, 2.0], [2.0, 20.0, 1.0]])
    lo, hi = bound.limits(X)
    assert hi[0] == pytest.approx(KAPPA * 100.0) and lo[0] == 0.0  # no run has more than it
    assert lo[1] == pytest.approx(400.0 / KAPPA) and hi[1] == np.inf  # less mem than run 2
    # run 0 has more memory and less input (not faster); run 1 less memory but less input
    assert lo[2] == pytest.approx(100.0 / KAPPA) and hi[2] == np.inf
    held = bound.hold(X, np.array([1e5, 1.0, 77.0]))
    np.testing.assert_allclose(held, [KAPPA * 100.0, 400.0 / KAPPA, 77.0])


def test_runs_that_break_the_order_by_more_than_kappa_give_no_bound() -> None:
    signs = signs_of(ATTRS)
    assert monotone_bound(RUNS, np.array([100.0, 80.0, 400.0]), signs) is not None  # 1.25x
    assert monotone_bound(RUNS, np.array([100.0, 60.0, 400.0]), signs) is None  # 1.67x
    assert monotone_bound(RUNS, np.array([100.0, 0.0, 400.0]), signs) is None


def _held_model() -> tuple[CostModel, np.ndarray, np.ndarray]:
    model, X = occupancy_model()
    runs, measured = X[:20], model.predict_many(X[:20])
    signs = signs_of(model.attributes)
    wild = dataclasses.replace(
        model, predictors={**model.predictors, "D": dataclasses.replace(
            model.predictors["D"], params=model.predictors["D"].params * 3.0)})
    bound = monotone_bound(runs, measured, signs)
    assert bound is not None
    return dataclasses.replace(wild, support=runs.tolist(), monotone=bound), X, measured


def test_a_model_holds_its_predictions_and_intervals_and_round_trips(tmp_path: Path) -> None:
    held, X, measured = _held_model()
    unheld = dataclasses.replace(held, monotone=None)
    assert np.any(held.predict_many(X) != unheld.predict_many(X))  # the bound binds
    lo, hi = held.monotone.limits(X)  # type: ignore[union-attr]
    T = held.predict_many(X)
    assert np.all((T >= lo * (1 - 1e-12)) & (T <= hi * (1 + 1e-12)))
    row = dict(zip([a["name"] for a in held.attributes], X[0], strict=True))
    p, q = held.predict_interval(row), unheld.predict_interval(row)
    assert p.mean == pytest.approx(T[0])
    assert (p.hi - p.lo) / p.mean == pytest.approx((q.hi - q.lo) / q.mean)  # moved, not cut
    doc = held.to_dict()
    assert doc["version"] == 6 and len(doc["monotone"]["T"]) == 20
    back = load_model(held.save(tmp_path / "m.json"))
    np.testing.assert_array_equal(back.predict_many(X), T)
    assert unheld.to_dict()["version"] < 6 and "monotone" not in unheld.to_dict()


@pytest.mark.parametrize("garbled", [{"kappa": 1.5, "T": [1.0]}, {"kappa": 0.5, "T": None},
                                     {"T": [1.0] * 20}, [1.5], {"kappa": 1.5, "T": [-1.0] * 20}])
def test_a_garbled_bound_is_refused_naming_the_field(garbled: object) -> None:
    held, _, _ = _held_model()
    with pytest.raises(ModelError, match="bad field 'monotone'"):
        CostModel.from_dict({**held.to_dict(), "monotone": garbled})


def _learner(monotone: bool, bounded: bool = True) -> Learner:
    space = ResourceSpace((Attribute("mem", (1.0, 2.0, 4.0, 8.0)),
                           Attribute("cpu", (0.25, 0.5, 1.0))))
    learner = Learner(space, "occupancy", (4.0, 0.5), PredictorOptions(
        bounded=bounded, monotone=monotone, final_fit="numpy"))
    for p in learner.predictor_names:
        learner.active[p] = ["mem", "cpu"]
    for mem, cpu in [(1.0, 0.25), (2.0, 1.0), (4.0, 0.5), (8.0, 0.25), (1.0, 1.0),
                     (8.0, 1.0), (2.0, 0.5)]:
        targets = {"o_a": 0.1 / cpu, "o_n": 0.02, "o_d": 0.3 / mem, "D": 100.0}
        T = targets["D"] * (targets["o_a"] + targets["o_n"] + targets["o_d"])
        learner.add(Sample(assignment={"mem": mem, "cpu": cpu}, T=T, **targets))
    learner.refit()
    return learner


def test_a_learner_with_the_option_delivers_its_model_held_near_its_runs() -> None:
    learner = _learner(monotone=True)
    X = np.asarray(learner.space.candidates, float)
    model = learner.model()
    assert model.monotone is not None and model.to_dict()["version"] == 6
    np.testing.assert_array_equal(model.monotone.runs, learner.X)
    np.testing.assert_array_equal(model.monotone.T, learner.T())
    held = model.monotone.hold(X, learner.predicted_T(X))  # the planner reads it unheld
    np.testing.assert_allclose(model.predict_many(X), held, rtol=1e-12)
    assert _learner(monotone=False).model().monotone is None


def test_the_option_needs_a_bounded_model() -> None:
    with pytest.raises(ConfigError, match="monotone needs predictors.bounded"):
        PredictorOptions(bounded=False, monotone=True)
    with pytest.raises(ConfigError, match="predictors.monotone must be true or false"):
        PredictorOptions.from_dict({"bounded": True, "monotone": "yes"})


def test_a_held_prediction_says_so_and_one_inside_the_limits_does_not() -> None:
    held, X, _ = _held_model()
    lo, hi = held.monotone.limits(X)  # type: ignore[union-attr]
    unheld_T = dataclasses.replace(held, monotone=None).predict_many(X)
    broke = (unheld_T < lo) | (unheld_T > hi)
    assert broke.any() and not broke.all()
    names = [a["name"] for a in held.attributes]
    for i in (int(np.argmax(broke)), int(np.argmin(broke))):
        p = held.predict_interval(dict(zip(names, X[i], strict=True)))
        assert p.held == bool(broke[i])
    row = dict(zip(names, X[int(np.argmax(broke))], strict=True))
    assert not dataclasses.replace(held, monotone=None).predict_interval(row).held


def test_nimo_predict_warns_where_the_runs_held_the_prediction(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    held, X, _ = _held_model()
    lo, hi = held.monotone.limits(X)  # type: ignore[union-attr]
    unheld_T = dataclasses.replace(held, monotone=None).predict_many(X)
    broke = (unheld_T < lo) | (unheld_T > hi)
    path = held.save(tmp_path / "m.json")
    names = [a["name"] for a in held.attributes]
    for i, warned in ((int(np.argmax(broke)), True), (int(np.argmin(broke)), False)):
        values = [f"{n}={float(v)!r}" for n, v in zip(names, X[i], strict=True)]
        assert main(["predict", str(path), *values]) == 0
        err = capsys.readouterr().err
        assert ("breaks the order of the measured runs" in err) == warned
