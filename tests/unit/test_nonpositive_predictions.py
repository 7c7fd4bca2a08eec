"""A model that predicts a run time that is not positive (an unbounded form gone wrong: issue 9
found 27 of 60 `paper-default` models on real groups doing so somewhere, unwarned) is never
taken for a run time: the campaign records and warns of the share, `nimo predict` exits 3,
and plan costing refuses it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from test_cost_model import REF, direct_model
from test_planner import PAPER, campaign

from nimo.campaign.metrics import nonpositive_predictions
from nimo.errors import ConfigError, ModelError
from nimo.model import CostModel
from nimo.scheduling import StagingModel, plan_cost
from workbench.cli import main
from workbench.exitstatus import model_warnings


def negative_model() -> CostModel:
    """``direct_model`` refitted as an identity response with negative coefficients."""
    model = direct_model()
    T = model.predictors["T"]
    negated = dataclasses.replace(T, response="identity", params=-np.abs(T.params))
    flipped = dataclasses.replace(model, predictors={"T": negated})
    assert flipped.predict(REF) < 0
    return flipped


def test_predict_prints_the_impossible_time_and_exits_3(tmp_path: Path, capsys) -> None:
    path = negative_model().save(tmp_path / "m.json")
    values = [f"{k}={v:g}" for k, v in REF.items()]
    assert main(["predict", str(path), *values]) == 3
    out, err = capsys.readouterr()
    assert out.startswith("T = -") and "no positive run time" in err
    good = direct_model().save(tmp_path / "good.json")
    assert main(["predict", str(good), *values]) == 0
    assert "no positive run time" not in capsys.readouterr().err


def test_plan_costing_refuses_a_task_the_model_cannot_cost() -> None:
    dag = nx.DiGraph()
    dag.add_node("stage", time_s=10.0)
    dag.add_node("G", model=negative_model(), profile=REF)
    dag.add_edge("stage", "G")
    with pytest.raises(ModelError, match="task 'G'.*no positive run time"):
        plan_cost(dag)
    dag.nodes["G"]["model"] = direct_model()
    assert plan_cost(dag).makespan_s > 10.0


def test_the_share_is_warned_of_only_when_above_zero() -> None:
    doc = {"training": {"nonpositive_share": 0.25}}
    warned = [w for w in model_warnings(doc, []) if "non-positive" in w]
    assert len(warned) == 1 and warned[0].startswith(
        "the model predicts a non-positive or non-finite run time at 25% of the candidate")
    for record in ({"nonpositive_share": 0}, {"nonpositive_share": "x"}, {}, None,
                   {"nonpositive_share": True}, {"nonpositive_share": 3.0}):
        assert nonpositive_predictions({"training": record}) is None, record
        assert not [w for w in model_warnings({"training": record}, []) if "non-positive" in w]


def test_the_planner_records_the_share_its_model_predicts_nonpositive(monkeypatch) -> None:
    planner, _, _ = campaign({**PAPER, "stop": {"error_pct": 0, "max_runs": 10}})
    model = planner.model()
    assert model is not None and "nonpositive_share" not in model.training
    real = planner.learner.predicted_T

    def half_negative(X: np.ndarray) -> np.ndarray:
        T = real(X)
        return np.where(np.arange(T.size) % 2 == 0, -T, T)

    monkeypatch.setattr(planner.learner, "predicted_T", half_negative)
    share = planner.model().training["nonpositive_share"]
    assert share == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("node", [{"time_s": float("nan")}, {"time_s": -5.0}, {"time_s": "x"},
                                  {"staging": StagingModel(10.0), "size_mb": float("inf")}])
def test_plan_costing_refuses_a_time_that_is_not_a_duration(node) -> None:
    dag = nx.DiGraph()
    dag.add_node("a", time_s=1.0)
    dag.add_node("b", **node)
    dag.add_edge("a", "b")
    with pytest.raises(ConfigError, match="task 'b': .* must be a finite number >= 0"):
        plan_cost(dag)


@pytest.mark.parametrize(("bw", "lat"), [(float("nan"), 0.0), (0.0, 0.0), (10.0, float("inf")),
                                         (10.0, -1.0)])
def test_a_staging_link_needs_finite_positive_figures(bw: float, lat: float) -> None:
    with pytest.raises(ConfigError, match="staging link needs"):
        StagingModel(bw, lat)
