"""The fold-chosen blend with a Gaussian process on log T (``predictors.gp``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_cost_model import predict_in_a_fresh_process

from nimo.errors import ConfigError, ModelError
from nimo.model import CostModel
from nimo.model.gp import blended
from nimo.planner.blend import Blend
from nimo.planner.learner import Learner
from nimo.predictors import PredictorOptions
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace

MEM = tuple(float(v) for v in range(1, 17))
CPU = (0.25, 0.5, 0.75, 1.0)
TRAIN = np.sort(np.random.default_rng(1).permutation(len(MEM) * len(CPU))[:32])


def grid() -> np.ndarray:
    return np.array([[m, c] for m in MEM for c in CPU])


def smooth_knee(X: np.ndarray) -> np.ndarray:
    """A run time no form of the (identity, reciprocal) terms holds: a smooth memory knee
    that deepens as the CPU share falls."""
    mem, cpu = X[:, 0], X[:, 1]
    return 20.0 + 80.0 / cpu * (1.0 + 3.0 / (1.0 + np.exp(mem - 6.0)))


def parametric(X: np.ndarray) -> np.ndarray:
    return 20.0 + 80.0 / X[:, 1]


def learner_on(truth, gp: bool, min_share: float = 0.0, min_runs: int = 0) -> Learner:
    space = ResourceSpace((Attribute("mem", MEM), Attribute("cpu", CPU)))
    learner = Learner(space, "direct", (8.0, 0.5),
                      PredictorOptions(bounded=True, gp=gp, gp_min_share=min_share,
                                       gp_min_runs=min_runs, final_fit="numpy",
                                       transforms=("identity", "reciprocal")))
    learner.active["f_T"] = ["mem", "cpu"]
    X = grid()[TRAIN]
    for (m, c), T in zip(X, truth(X), strict=True):
        learner.add(Sample(assignment={"mem": m, "cpu": c}, T=float(T)))
    learner.refit()
    learner.cv_errors()  # chooses the blend's weight
    return learner


def unseen_mape(model: CostModel, truth) -> float:
    X = np.delete(grid(), TRAIN, axis=0)
    return float(np.mean(np.abs(model.predict_many(X) - truth(X)) / truth(X)) * 100)


def test_the_folds_blend_in_the_process_where_the_form_misses_and_it_pays() -> None:
    plain, blend = learner_on(smooth_knee, False), learner_on(smooth_knee, True)
    assert blend.blend_weight > 0
    plain_cv, blend_cv = plain.cv_errors()[0], blend.cv_errors()[0]
    assert plain_cv is not None and blend_cv is not None and blend_cv < plain_cv
    assert unseen_mape(blend.model(), smooth_knee) < 0.7 * unseen_mape(plain.model(), smooth_knee)
    # the error on the runs themselves and the fixed-form folds read the blend too
    assert blend.fixed_form_error() is not None
    assert blend.fixed_form_error() < plain.fixed_form_error()


def test_the_learner_predicts_as_its_model_does_without_building_it() -> None:
    for truth in (smooth_knee, parametric):
        learner = learner_on(truth, True)
        X = grid()
        assert np.allclose(learner.predicted_T(X), learner.model().predict_many(X),
                           rtol=1e-12, atol=0.0)
    assert learner_on(smooth_knee, True).blend_weight > 0  # the blended path was checked


def test_the_blend_waits_until_the_runs_cover_the_share_of_candidates_asked() -> None:
    # 32 runs of 64 candidates: a share of one half lets the blend in, 0.6 keeps it out
    assert learner_on(smooth_knee, True, min_share=0.5).blend_weight > 0
    sparse = learner_on(smooth_knee, True, min_share=0.6)
    assert sparse.blend_weight == 0.0 and sparse.gp_process() is None
    plain = learner_on(smooth_knee, False)
    assert sparse.cv_errors()[0] == pytest.approx(plain.cv_errors()[0])
    assert sparse.model().gp is None


def test_a_long_campaign_considers_the_blend_before_its_runs_cover_the_share() -> None:
    # 32 runs of 64 candidates, a share of 0.6 (38 runs): 32 runs asked let the blend in,
    # 33 do not
    early = learner_on(smooth_knee, True, min_share=0.6, min_runs=32)
    assert early.blend_weight > 0 and early.model().gp is not None
    assert early.blend_weight == learner_on(smooth_knee, True, min_share=0.5).blend_weight
    late = learner_on(smooth_knee, True, min_share=0.6, min_runs=33)
    assert late.blend_weight == 0.0 and late.gp_process() is None


def test_a_form_that_holds_keeps_the_model_parametric() -> None:
    learner = learner_on(parametric, True)
    assert learner.blend_weight == 0.0 and learner.gp_process() is None
    model = learner.model()
    assert model.gp is None and "gp" not in json.loads(model.to_json())
    assert unseen_mape(model, parametric) < 0.5


def test_a_blended_model_round_trips_through_json_with_its_part_bounds() -> None:
    model = learner_on(smooth_knee, True).model()
    d = json.loads(model.to_json())
    assert d["version"] == 4 and 0 < d["gp"]["weight"] <= 1 and d["part_bounds"]
    assert len(d["gp"]["log_t"]) == len(d["support"])
    again = CostModel.from_dict(d)
    np.testing.assert_allclose(again.predict_many(grid()), model.predict_many(grid()),
                               rtol=1e-9)
    # the interval is centred on the blended prediction
    p = again.predict_interval({"mem": 3.0, "cpu": 0.5})
    assert p.mean == pytest.approx(float(model.predict_many(np.array([[3.0, 0.5]]))[0]))
    assert p.lo < p.mean < p.hi


@pytest.mark.parametrize("damage", [
    lambda d: d["gp"].update(weight=0.0),
    lambda d: d["gp"].update(weight=1.5),
    lambda d: d["gp"].pop("weight"),
    lambda d: d["gp"].update(log_t=[1.0]),
    lambda d: d.pop("support"),
])
def test_a_damaged_gp_field_is_a_one_line_model_error(damage) -> None:
    d = json.loads(learner_on(smooth_knee, True).model().to_json())
    damage(d)
    with pytest.raises(ModelError, match="gp"):
        CostModel.from_dict(d)


def test_the_option_needs_a_bounded_model_and_a_cross_validated_error() -> None:
    from nimo.planner.design import parse_design

    assert PredictorOptions.from_dict({"bounded": True, "gp": True}).gp
    with pytest.raises(ConfigError, match="predictors.gp needs predictors.bounded"):
        PredictorOptions.from_dict({"gp": True})
    with pytest.raises(ConfigError, match="predictors.gp must be true or false"):
        PredictorOptions.from_dict({"bounded": True, "gp": "yes"})
    with pytest.raises(ConfigError, match=r"d.yaml: predictors.gp: needs a cross-validated"):
        parse_design({"predictors": {"bounded": True, "gp": True}, "error": "loo"}, "d.yaml")
    assert "gp" not in PredictorOptions().to_dict()


@pytest.mark.parametrize(("options", "message"), [
    ({"bounded": True, "gp": True, "gp_min_share": 1.0}, r"gp_min_share must lie in \[0, 1\)"),
    ({"bounded": True, "gp": True, "gp_min_share": -0.1}, "gp_min_share must lie in"),
    ({"bounded": True, "gp": True, "gp_min_share": "many"}, "gp_min_share: bad number"),
    ({"bounded": True, "gp_min_share": 0.05}, "gp_min_share needs predictors.gp: true"),
    ({"bounded": True, "gp": True, "gp_min_share": 0.05, "gp_min_runs": -1},
     "gp_min_runs must be >= 0"),
    ({"bounded": True, "gp": True, "gp_min_share": 0.05, "gp_min_runs": "forty"},
     "gp_min_runs: bad number"),
    ({"bounded": True, "gp": True, "gp_min_runs": 40}, "gp_min_runs needs predictors.gp_min_share"),
])
def test_a_bad_min_share_is_a_one_line_config_error(options, message) -> None:
    with pytest.raises(ConfigError, match=message):
        PredictorOptions.from_dict(options)


def test_the_min_share_is_echoed_only_when_set() -> None:
    shared = PredictorOptions.from_dict({"bounded": True, "gp": True, "gp_min_share": 0.05})
    assert shared.to_dict()["gp_min_share"] == 0.05
    assert PredictorOptions.from_dict(shared.to_dict()) == shared
    assert "gp_min_share" not in PredictorOptions(bounded=True, gp=True).to_dict()
    both = PredictorOptions.from_dict(
        {"bounded": True, "gp": True, "gp_min_share": 0.05, "gp_min_runs": 40})
    assert both.to_dict()["gp_min_runs"] == 40
    assert PredictorOptions.from_dict(both.to_dict()) == both
    assert "gp_min_runs" not in shared.to_dict()


def test_a_blended_model_predicts_with_numpy_alone(tmp_path: Path) -> None:
    model = learner_on(smooth_knee, True).model()
    path = model.save(tmp_path / "m.json")
    predicted, heavy = predict_in_a_fresh_process(path, {"mem": 3, "cpu": 0.5})
    expected = float(model.predict_many(np.array([[3.0, 0.5]]))[0])
    assert predicted == pytest.approx(expected, rel=1e-9) and heavy == "[]"


def test_the_weight_is_the_folds_best_and_zero_without_a_process_prediction() -> None:
    T = np.array([10.0, 20.0, 30.0, 40.0])
    blend = Blend()
    assert blend.choose(T, T * 1.5, T, 1.0, lambda t: t) == 1.0
    assert blend.choose(T, T, T * 1.5, 1.0, lambda t: t) == 0.0
    assert blend.choose(T, T * 1.5, T * 1.5, 1.0, lambda t: t) == 0.0  # a tie: the smaller
    nan = np.array([10.0, np.nan, 30.0, 40.0])
    assert blend.choose(T, T * 1.5, nan, 1.0, lambda t: t) == 0.0
    # where the runs do not inform G at all, no weight changes anything: P's alone
    assert blend.choose(T, T * 1.5, T, 0.0, lambda t: t) == 0.0
    np.testing.assert_allclose(blended(np.array([4.0]), np.array([16.0]), 0.5), [8.0])
    np.testing.assert_allclose(blended(np.array([4.0, 4.0]), np.array([16.0, 16.0]),
                                       np.array([0.0, 1.0])), [4.0, 16.0])


def test_a_parametric_time_below_zero_blends_as_the_fastest_bound_not_as_nan() -> None:
    model = learner_on(smooth_knee, True).model()
    assert model.bounds is not None and model.gp is not None
    X = np.array([[3.0, 0.5], [3.0, 0.5]])
    out, spread = model._corrected(X, np.array([-50.0, 1e-300]))
    assert np.isfinite(out).all() and (out > 0).all() and np.isfinite(spread).all()
    assert out[0] == pytest.approx(out[1])  # both held at the lower bound before blending
    d = json.loads(model.to_json())
    del d["bounds"]
    with pytest.raises(ModelError, match="'gp' needs 'bounds'"):
        CostModel.from_dict(d)
