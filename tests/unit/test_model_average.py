"""A delivered model averaged with the committee's plausible members
(nimo.model.average, ``predictors.committee_mean``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from test_cost_model import NAMES, occupancy_model, predict_in_a_fresh_process
from test_learning_core import NEW
from test_planner import SPACE, campaign

from nimo.errors import ConfigError, ModelError
from nimo.model import CostModel, load_model
from nimo.model.average import MemberAverage, averaged
from nimo.planner.delivered import average_error_ratio
from nimo.predictors import PredictorOptions


def test_averaged_is_the_root_of_the_prediction_times_the_geometric_mean() -> None:
    T = np.array([4.0, 9.0, 2.0, -1.0, np.nan])
    members = np.array([[1.0, 9.0, np.nan, 5.0, 3.0],
                        [1.0, 9.0, np.nan, 5.0, 3.0]])
    out = averaged(T, members)
    # column 0: G = (4 * 1 * 1)^(1/3); sqrt(4 G)
    assert out[0] == pytest.approx(math.sqrt(4.0 * 4.0 ** (1 / 3)))
    assert out[1] == pytest.approx(9.0)  # members that agree leave T alone
    assert out[2] == pytest.approx(2.0)  # no finite member: T itself
    assert out[3] == -1.0 and np.isnan(out[4])  # nothing to average in log: T as it is
    assert np.allclose(averaged(T[:3], np.empty((0, 3))), T[:3])  # no member at all


def averaged_model() -> tuple[CostModel, CostModel, np.ndarray]:
    """(the model averaged with two other fits, the model alone, its training rows)."""
    model, X = occupancy_model(seed=0, n=30, noise=0.05)
    others = [occupancy_model(seed=s, n=12, noise=0.05)[0].predictors for s in (1, 2)]
    return CostModel(**{**model.__dict__, "average": MemberAverage(tuple(others))}), model, X


def test_an_averaged_model_lies_between_its_fit_and_its_members_and_round_trips(
        tmp_path: Path) -> None:
    avg, alone, X = averaged_model()
    T, own = avg.predict_many(X), alone.predict_many(X)
    members = avg.average.member_T(X) if avg.average else np.empty(0)
    lo = np.minimum(own, np.nanmin(members, axis=0))
    hi = np.maximum(own, np.nanmax(members, axis=0))
    assert np.all((T >= lo * (1 - 1e-12)) & (T <= hi * (1 + 1e-12)))
    assert not np.allclose(T, own)  # the members moved it
    doc = avg.to_dict()
    assert doc["version"] == 7 and len(doc["average"]["members"]) == 2
    back = load_model(avg.save(tmp_path / "m.json"))
    np.testing.assert_allclose(back.predict_many(X), T, rtol=1e-12)
    row = dict(zip(NAMES, X[0], strict=True))
    p = back.predict_interval(row)
    assert p.mean == pytest.approx(T[0]) and p.lo < p.mean < p.hi  # the interval moves too


def test_a_corrupt_average_field_is_one_line_naming_it() -> None:
    avg, _, _ = averaged_model()
    good = avg.to_dict()
    for bad, says in ((5, r"'average' \(its 'members' must list"),
                      ({"members": [{"D": {}}]}, r"'average.members\[0\]' \(lacks")):
        with pytest.raises(ModelError, match=f"bad field {says}") as e:
            CostModel.from_dict({**good, "average": bad})
        assert "\n" not in str(e.value)
    d = json.loads(json.dumps(good))
    del d["average"]["members"][1]["o_a"]["params"]
    with pytest.raises(ModelError, match="predictor 'o_a' lacks field 'params'"):
        CostModel.from_dict(d)


def test_committee_mean_is_a_checked_true_or_false_option() -> None:
    assert PredictorOptions.from_dict({"committee_mean": True}).committee_mean
    assert "committee_mean" not in PredictorOptions().to_dict()  # echoed only when set
    with pytest.raises(ConfigError, match="committee_mean must be true or false"):
        PredictorOptions.from_dict({"committee_mean": "yes"})


def test_a_campaign_with_committee_mean_delivers_the_average_and_its_error() -> None:
    design = {**NEW, "stop": {"error_pct": 0, "max_runs": 14},
              "predictors": {**NEW["predictors"], "committee_mean": True}}
    planner, _, result = campaign(design)
    learner = planner.learner
    model = learner.model()
    assert model.average is not None
    assert len(model.average.members) == len(learner.committee_members()) >= 1
    X = np.asarray(SPACE.candidates, float)
    members = learner.committee(X, plausible_only=True)
    np.testing.assert_allclose(model.predict_many(X), averaged(members[0], members[1:]),
                               rtol=1e-9)
    ratio = average_error_ratio(learner)
    assert 0.5 <= ratio <= 2.0
    plain, _, plain_result = campaign({**design, "predictors": NEW["predictors"]})
    assert plain.learner.model().average is None and average_error_ratio(plain.learner) == 1
    # the same runs (the planner reads the model before the average); the error is scaled
    assert [r.assignment for r in result.iterations] == [
        r.assignment for r in plain_result.iterations]
    assert ratio != 1.0
    assert planner.internal_error == pytest.approx(plain.internal_error * ratio)


def test_an_averaged_model_predicts_with_numpy_alone(tmp_path: Path) -> None:
    avg, _, X = averaged_model()
    path = avg.save(tmp_path / "m.json")
    row = dict(zip(NAMES, X[3].tolist(), strict=True))
    predicted, heavy = predict_in_a_fresh_process(path, row)
    assert predicted == pytest.approx(float(avg.predict_many(X[3:4])[0]), rel=1e-9)
    assert heavy == "[]"
