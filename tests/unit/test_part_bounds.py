"""Part bounds: a bounded model holds each predictor's prediction (D and the occupancies)
within a factor of what its runs measured, so that a form extrapolating into a corner the
runs never combined cannot multiply T by thousands (tuning suite gen74 seed 2: 0.9% external
MAPE after 15 runs, 983% after the 16th, while the internal error read 2.3%)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from nimo.errors import ModelError
from nimo.model import CostModel, load_model
from nimo.model.support import clip_parts, part_bounds_doc, part_bounds_from, part_bounds_of
from nimo.planner.learner import BOUND_FACTOR, Learner
from nimo.predictors import PredictorOptions
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace
from tests.unit.test_cost_model import occupancy_model


def test_parts_are_clipped_to_their_bounds_and_nan_stays_nan() -> None:
    parts = {"a": np.array([0.5, 50.0, math.nan]), "b": np.array([-1.0])}
    out = clip_parts(parts, {"a": (1.0, 10.0)})
    np.testing.assert_array_equal(out["a"][:2], [1.0, 10.0])
    assert math.isnan(out["a"][2])
    np.testing.assert_array_equal(out["b"], [-1.0])  # no bounds: unchanged


def test_the_bounds_are_a_factor_beyond_the_positive_finite_targets() -> None:
    bounds = part_bounds_of({"o_n": np.array([0.0, 0.2, 0.8, math.inf]),
                             "o_d": np.array([0.0, 0.0])}, 4.0)
    assert bounds["o_n"] == (0.05, 3.2)
    assert "o_d" not in bounds  # nothing positive measured: nothing to hold it near
    assert part_bounds_doc(bounds) == {"o_n": [0.05, 3.2]}


def test_a_part_measured_only_as_zero_is_clipped_alike_in_memory_and_after_json(
        tmp_path: Path) -> None:
    model, X = occupancy_model()
    measured = {**model.predict_targets(X), "o_d": np.zeros(len(X))}
    bounded = dataclasses.replace(model, part_bounds=part_bounds_of(measured, BOUND_FACTOR))
    back = load_model(bounded.save(tmp_path / "m.json"))
    assert back.part_bounds == bounded.part_bounds and "o_d" not in back.part_bounds
    np.testing.assert_array_equal(back.predict_many(X), bounded.predict_many(X))


def test_a_form_exploding_in_an_unmeasured_corner_is_held_near_the_runs() -> None:
    model, X = occupancy_model()
    measured = model.predict_targets(X)
    n = model.predictors["o_n"]
    exploding = dataclasses.replace(n, params=n.params * 40.0)  # o_n off by orders of magnitude
    wild = dataclasses.replace(model, predictors={**model.predictors, "o_n": exploding})
    held = dataclasses.replace(wild, part_bounds=part_bounds_of(measured, BOUND_FACTOR))
    assert wild.predict_targets(X)["o_n"].max() > 1e6 * measured["o_n"].max()
    o_n = held.predict_targets(X)["o_n"]
    assert o_n.max() <= BOUND_FACTOR * measured["o_n"].max() * (1 + 1e-12)
    mean, var, _ = held.predict_var_many(X)
    np.testing.assert_allclose(mean, held.predict_many(X), rtol=1e-12)
    assert np.all(np.isfinite(var))


def test_part_bounds_round_trip_as_version_4_and_garbled_ones_are_refused(
        tmp_path: Path) -> None:
    model, X = occupancy_model()
    bounded = dataclasses.replace(
        model, part_bounds=part_bounds_of(model.predict_targets(X), BOUND_FACTOR))
    doc = bounded.to_dict()
    assert doc["version"] == 4 and set(doc["part_bounds"]) == {"o_a", "o_n", "o_d", "D"}
    back = load_model(bounded.save(tmp_path / "m.json"))
    assert back.part_bounds == bounded.part_bounds
    np.testing.assert_array_equal(back.predict_many(X), bounded.predict_many(X))
    assert model.to_dict()["version"] < 4 and "part_bounds" not in model.to_dict()
    for garbled in ({"o_x": [0, 1]}, {"o_n": [2, 1]}, {"o_n": "wide"}, [0, 1],
                    {"o_n": [0, None]}, {"o_n": [0, math.nan]}, {"o_n": [0, math.inf]}):
        with pytest.raises(ModelError, match="bad field 'part_bounds'"):
            CostModel.from_dict({**doc, "part_bounds": garbled})


def test_reading_part_bounds_names_what_is_valid() -> None:
    assert part_bounds_from(None, ("T",)) == {}
    with pytest.raises(ValueError, match="some of T"):
        part_bounds_from({"D": [0, 1]}, ("T",))


@pytest.mark.parametrize("bounded", [True, False])
def test_a_learners_model_carries_part_bounds_only_when_bounded(bounded: bool) -> None:
    space = ResourceSpace((Attribute("mem", (1.0, 2.0, 4.0, 8.0)),
                           Attribute("cpu", (0.25, 0.5, 1.0))))
    learner = Learner(space, "occupancy", (4.0, 0.5),
                      PredictorOptions(bounded=bounded, final_fit="numpy"))
    for p in learner.predictor_names:
        learner.active[p] = ["mem", "cpu"]
    rng = np.random.default_rng(3)
    for mem, cpu in [(m, c) for m in (1.0, 2.0, 4.0, 8.0) for c in (0.25, 0.5, 1.0)]:
        targets = {"o_a": 0.1 / cpu, "o_n": 0.02 + 0.01 * rng.random(), "o_d": 0.3 / mem,
                   "D": 100.0}
        T = targets["D"] * (targets["o_a"] + targets["o_n"] + targets["o_d"])
        learner.add(Sample(assignment={"mem": mem, "cpu": cpu}, T=T, **targets))
    learner.refit()
    model = learner.model()
    if not bounded:
        assert model.part_bounds == {} and "part_bounds" not in model.to_dict()
        return
    o_d = [s.target("o_d") for s in learner.samples]
    assert model.part_bounds["o_d"] == (min(o_d) / BOUND_FACTOR, max(o_d) * BOUND_FACTOR)
    assert set(model.part_bounds) == {"o_a", "o_n", "o_d", "D"}
