"""Hinges of a capacity over a load (predictors.load_ratios): a memory cliff that moves
with the input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nimo.errors import ModelError
from nimo.model.features import Factor, Term, design_matrix
from nimo.model.predictor import FittedPredictor
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.predictors.ratios import load_ratio_pairs, ratio_candidates
from nimo.space import Attribute

MEM = [256.0, 512.0, 768.0, 1024.0, 1536.0, 2048.0, 3072.0, 4096.0]
INPUT = [100.0, 200.0, 400.0, 800.0, 1600.0]
NAMES = ("mem", "input")
LEVELS = {"mem": MEM, "input": INPUT}
REF = (1024.0, 400.0)


def per_mb_time(X: np.ndarray) -> np.ndarray:
    """Seconds per MB: 1, and up to 3x more below a working set of 2.5 x the input."""
    return 1.0 + 2.0 * np.clip(1.0 - X[:, 0] / (2.5 * X[:, 1]), 0.0, 1.0)


def fit(X: np.ndarray, y: np.ndarray, **opts: object) -> FittedPredictor:
    return fit_predictor("o_a", X, y, NAMES, NAMES, REF, 1.0, LEVELS,
                         PredictorOptions(**opts), ratios=[("mem", "input")])


def test_ratio_factor_values_label_and_round_trip() -> None:
    f = Factor("mem", "piecewise_below", 2.0, over="input")
    columns = {"mem": np.array([1.0, 2.0, 8.0]), "input": np.array([1.0, 2.0, 2.0])}
    np.testing.assert_allclose(Term((f,)).evaluate(columns), [1.0, 1.0, 0.0])
    assert f.label == "max(0,2-mem/input)"
    assert Factor.from_dict(f.to_dict()) == f
    assert Term((f,)).attrs == ("mem", "input") and Term((f,)).is_ratio
    A = design_matrix([Term((f,))], np.column_stack([columns["mem"], columns["input"]]), NAMES)
    np.testing.assert_allclose(A[:, 1], [1.0, 1.0, 0.0])


@pytest.mark.parametrize(("transform", "over"), [("identity", "input"), ("log", "input"),
                                                 ("piecewise", "mem")])
def test_ratio_is_only_a_hinge_of_two_attributes(transform: str, over: str) -> None:
    knot = 1.0 if transform == "piecewise" else None
    with pytest.raises(ModelError, match="ratio"):
        Factor("mem", transform, knot, over=over)


def test_pairs_are_capacities_over_loads() -> None:
    attrs = [Attribute("mem", (1.0, 2.0)), Attribute("lat", (0.0, 5.0), direction=-1),
             Attribute("input", (1.0, 2.0), direction=-1, load=True),
             Attribute("algo", (1.0, 2.0), categories=("a", "b")),
             Attribute("cpu", (1.0, 2.0))]
    assert load_ratio_pairs(attrs) == [("mem", "input"), ("cpu", "input")]
    assert load_ratio_pairs(attrs[:2]) == []


def test_ratio_hinges_wait_for_the_capacity_main_effect() -> None:
    columns = {"mem": np.array(MEM[:6]) / 1024, "input": np.array(INPUT + [100.0]) / 400}
    done: set[tuple[str, str]] = set()
    assert list(ratio_candidates([Term.main("input")], [("mem", "input")], columns, done)) == []
    found = list(ratio_candidates([Term.main("mem", "reciprocal")], [("mem", "input")],
                                  columns, done))
    assert found and all(t.is_ratio and t.factors[0].over == "input" for t, _ in found)
    assert done == {("mem", "input")}
    assert list(ratio_candidates([Term.main("mem")], [("mem", "input")], columns, done)) == []


def test_a_cliff_that_moves_with_the_input_is_learned_only_with_ratios() -> None:
    rng = np.random.default_rng(3)
    grid = np.array(list(itertools.product(MEM, INPUT)))
    train = grid[rng.choice(len(grid), 24, replace=False)]
    truth = per_mb_time(grid)
    errors = {}
    for on in (False, True):
        p = fit(train, per_mb_time(train), load_ratios=on)
        errors[on] = float(np.mean(np.abs(p.predict(grid) - truth) / truth)) * 100
        assert any(t.is_ratio for t in p.terms) == on
    assert errors[True] < 0.5 * errors[False], errors
    assert errors[True] < 5.0, errors


def test_a_ratio_term_survives_the_predictor_round_trip() -> None:
    grid = np.array(list(itertools.product(MEM, INPUT)))
    p = fit(grid, per_mb_time(grid), load_ratios=True)
    again = FittedPredictor.from_dict(p.to_dict(), NAMES)
    np.testing.assert_allclose(again.predict(grid), p.predict(grid), rtol=1e-12)


def test_load_ratios_option_is_read_and_echoed_only_when_set() -> None:
    assert PredictorOptions.from_dict({"load_ratios": True}).load_ratios
    assert "load_ratios" not in PredictorOptions().to_dict()
    assert PredictorOptions(load_ratios=True).to_dict()["load_ratios"] is True
