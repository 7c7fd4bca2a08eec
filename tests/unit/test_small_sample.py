"""The ``physical`` predictor option: two-point prior forms and the physical tie-break."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from nimo.model import CostModel
from nimo.model.features import Term
from nimo.planner.learner import Learner
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.predictors.options import PredictorOptions as Opts
from nimo.predictors.prior import physical_tiebreak, physical_transforms
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace

NODES = [4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 60.0]
PHYS = {"nodes": "reciprocal", "input": "identity"}


def amdahl(x: np.ndarray) -> np.ndarray:
    return 200.0 + 2400.0 / x


def fit_nodes(X: np.ndarray, y: np.ndarray, physical: bool, names=("nodes",),
              levels=None, phys=PHYS):
    ref = tuple(float(v) for v in X[0])
    return fit_predictor("T", X, y, names, list(names), ref, float(y[0]),
                         levels or {"nodes": NODES}, PredictorOptions(physical=physical),
                         phys)


def test_two_runs_of_a_capacity_give_amdahls_form_not_their_mean() -> None:
    X = np.array([[32.0], [4.0]])
    y = amdahl(X[:, 0])
    grid = np.array(NODES)[:, None]
    plain = fit_nodes(X, y, physical=False)
    assert plain.terms == () and np.allclose(plain.predict(grid), y.mean())
    p = fit_nodes(X, y, physical=True)
    assert [t.label for t in p.terms] == ["reciprocal(nodes)"] and p.response == "identity"
    np.testing.assert_allclose(p.predict(grid), amdahl(grid[:, 0]), rtol=1e-9)


def test_a_load_gets_a_straight_line_through_two_runs() -> None:
    X = np.array([[10.0], [40.0]])
    y = 5.0 + 2.0 * X[:, 0]
    p = fit_nodes(X, y, True, names=("input",), levels={"input": [10.0, 20.0, 40.0, 80.0]})
    assert [t.label for t in p.terms] == ["input"]
    np.testing.assert_allclose(p.predict(np.array([[80.0]])), [165.0], rtol=1e-9)


def test_time_falling_faster_than_one_over_x_takes_the_positive_power_law() -> None:
    X = np.array([[32.0], [4.0]])
    y = np.array([10.0, 1000.0])  # a + b/x through these is negative at 60 nodes
    p = fit_nodes(X, y, physical=True)
    assert p.response == "log" and [t.label for t in p.terms] == ["log(nodes)"]
    pred = p.predict(np.array(NODES)[:, None])
    assert np.all(pred > 0) and np.all(np.diff(pred) < 0)
    np.testing.assert_allclose(p.predict(X), y, rtol=1e-9)


def test_no_prior_when_two_attributes_change_or_the_attribute_is_categorical() -> None:
    X = np.array([[32.0, 10.0], [4.0, 40.0]])
    y = np.array([300.0, 900.0])
    levels = {"nodes": NODES, "input": [10.0, 40.0]}
    p = fit_nodes(X, y, True, names=("nodes", "input"), levels=levels)
    assert p.terms == ()
    q = fit_nodes(X[:, :1], y, True, phys={})  # no physical transform known
    assert q.terms == ()


def test_physical_ties_false_keeps_the_prior_but_not_the_tiebreak() -> None:
    X = np.array([[32.0], [32.0], [4.0], [4.0]])
    y = np.array([275.0, 280.0, 800.0, 802.0])
    ref = (32.0,)
    opts = PredictorOptions(physical=True, physical_ties=False)
    p = fit_predictor("T", X, y, ("nodes",), ["nodes"], ref, 275.0, {"nodes": NODES}, opts, PHYS)
    assert [t.label for t in p.terms] == ["nodes"]
    q = fit_predictor("T", X[1:3], y[1:3], ("nodes",), ["nodes"], ref, 280.0, {"nodes": NODES},
                      opts, PHYS)
    assert [t.label for t in q.terms] == ["reciprocal(nodes)"]


def test_tiebreak_prefers_the_physical_transform_only_on_exact_ties() -> None:
    terms = [Term.main("nodes", t) for t in ("identity", "reciprocal", "log")]
    tie = np.array([5.0, 5.0, 5.0])
    assert physical_tiebreak(terms, tie, 0, PHYS) == 1
    assert physical_tiebreak(terms, np.array([4.9, 5.0, 5.0]), 0, PHYS) == 0
    assert physical_tiebreak(terms, tie, 0, {}) == 0
    assert physical_tiebreak(terms, tie, 0, {"nodes": "identity"}) == 0


def test_selection_with_two_levels_keeps_the_capacitys_reciprocal() -> None:
    # four runs, nodes seen at two levels: identity and reciprocal fit equally well
    X = np.array([[32.0], [32.0], [4.0], [4.0]])
    y = np.array([275.0, 280.0, 800.0, 802.0])
    assert [t.label for t in fit_nodes(X, y, False).terms] == ["nodes"]
    p = fit_nodes(X, y, True)
    assert [t.label for t in p.terms] == ["reciprocal(nodes)"]
    assert p.predict(np.array([[60.0]]))[0] > 0


def test_physical_transforms_follow_direction_and_mark_categories() -> None:
    attrs = [Attribute("cpu", (1.0, 2.0)), Attribute("lat", (0.0, 5.0), direction=-1),
             Attribute("input", (1.0, 2.0), direction=-1, load=True),
             Attribute("family", (1.0, 2.0), categories=("a", "b"))]
    assert physical_transforms(attrs) == {"cpu": "reciprocal", "lat": "identity",
                                          "input": "identity", "family": "category"}


def test_option_parses_and_learner_uses_it_in_an_exported_model() -> None:
    assert Opts.from_dict({"physical": True}).physical
    space = ResourceSpace((Attribute("nodes", tuple(NODES)),))
    learner = Learner(space, "direct", (32.0,), Opts(physical=True, bounded=True))
    learner.active["f_T"] = ["nodes"]
    for x in (32.0, 4.0):
        learner.add(Sample(assignment={"nodes": x}, T=float(amdahl(np.array([x]))[0])))
    learner.refit()
    model = CostModel.from_dict(learner.model().to_dict())
    assert abs(model.predict({"nodes": 12.0}) - 400.0) < 1e-6


def test_recommended_physical_differs_from_recommended_only_by_the_physical_ties() -> None:
    designs = Path(__file__).resolve().parents[2] / "designs"
    rec = yaml.safe_load((designs / "recommended.yaml").read_text())
    phys = yaml.safe_load((designs / "recommended-physical.yaml").read_text())
    assert rec["predictors"]["physical"] is True and rec["predictors"]["physical_ties"] is False
    assert phys["predictors"] == {**rec["predictors"], "physical_ties": True}
    same = ("name", "description", "predictors")
    assert {k: v for k, v in phys.items() if k not in same} == {
        k: v for k, v in rec.items() if k not in same}
