"""The selection's lookahead (predictors.lookahead): a main effect that alone does not pay
joins together with the interaction it unlocks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.model.predictor import FittedPredictor
from nimo.predictors import PredictorOptions, fit_predictor

NAMES = ("a", "b")
LEVELS = {"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0]}
REF = (2.0, 2.0)


def grid(repeats: int = 2) -> np.ndarray:
    return np.array([p for p in itertools.product(LEVELS["a"], LEVELS["b"])] * repeats)


def crossed(X: np.ndarray, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    """b acts only through a: over the grid its average effect is nil."""
    rng = np.random.default_rng(seed)
    y = 10.0 + 3.0 * X[:, 0] + 2.0 * (X[:, 0] - 2.0) * (X[:, 1] - 2.0)
    return y * (1.0 + noise * rng.standard_normal(y.size))


def fit(X: np.ndarray, y: np.ndarray, **opts: object) -> FittedPredictor:
    options = PredictorOptions(log_response=False, final_fit="numpy", **opts)  # type: ignore[arg-type]
    return fit_predictor("o_a", X, y, NAMES, NAMES, REF, 1.0, LEVELS, options)


def labels(p: FittedPredictor) -> list[str]:
    return [t.label for t in p.terms]


def test_without_lookahead_the_greedy_search_stops_before_b() -> None:
    X = grid()
    p = fit(X, crossed(X))
    assert not any("b" in t.attrs for t in p.terms)
    assert p.loo_mape is not None and p.loo_mape > 1.0


def test_lookahead_takes_b_with_the_interaction_it_unlocks() -> None:
    X = grid()
    p = fit(X, crossed(X), lookahead=True)
    assert any(t.is_interaction and set(t.attrs) == {"a", "b"} for t in p.terms)
    assert p.loo_mape is not None and p.loo_mape < 1e-6
    np.testing.assert_allclose(p.predict(X), crossed(X), rtol=1e-8)


def test_lookahead_adds_nothing_where_b_does_not_act() -> None:
    X = grid(3)
    y = (10.0 + 3.0 * X[:, 0]) * (1.0 + 0.02 * np.random.default_rng(1).standard_normal(len(X)))
    assert labels(fit(X, y, lookahead=True)) == labels(fit(X, y))


def test_a_pair_must_pay_for_two_terms() -> None:
    """A weak interaction under noise: the pair's cut is below (1 - need)^2, so no pair."""
    X = grid(3)
    rng = np.random.default_rng(2)
    y = (10.0 + 3.0 * X[:, 0] + 0.05 * (X[:, 0] - 2.0) * (X[:, 1] - 2.0)) \
        * (1.0 + 0.03 * rng.standard_normal(len(X)))
    p = fit(X, y, lookahead=True)
    assert not any(t.is_interaction for t in p.terms)


def test_a_pair_is_not_taken_without_room_for_two_terms() -> None:
    X = grid()
    p = fit(X, crossed(X), lookahead=True, max_terms=2)
    assert len(p.terms) <= 2
    assert not any(t.is_interaction for t in p.terms)


def test_the_option_needs_interactions_and_is_echoed_only_when_set() -> None:
    with pytest.raises(ConfigError, match="lookahead needs predictors.interactions"):
        PredictorOptions.from_dict({"lookahead": True, "interactions": False})
    with pytest.raises(ConfigError, match="lookahead must be true or false"):
        PredictorOptions.from_dict({"lookahead": "yes"})
    assert "lookahead" not in PredictorOptions().to_dict()
    assert PredictorOptions.from_dict({"lookahead": True}).to_dict()["lookahead"] is True
