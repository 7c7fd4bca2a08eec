"""``predictors.power_first``: the term search that starts among the log main effects finds a
product of powers the plain greedy search misses at small samples (tuning gen649)."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.predictors import PredictorOptions, fit_predictor

NAMES = ("mhz", "share", "disk")
LEVELS = {"mhz": [1010.0, 1150.0, 1240.0, 1250.0, 2510.0, 3240.0],
          "share": [0.292, 0.534, 0.936, 0.952], "disk": [59.8, 61.0, 207.0, 325.0, 473.0]}
PHYSICAL = {a: "reciprocal" for a in NAMES}


def sample(n: int, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.choice(LEVELS[a], n) for a in NAMES])
    y = 0.8 * (1000.0 / X[:, 0]) ** 0.73 / X[:, 1] * rng.lognormal(0.0, 0.02, n)
    return X, y


def fit(X: np.ndarray, y: np.ndarray, power_first: bool):
    opts = PredictorOptions(mode="auto", physical=True, power_first=power_first)
    return fit_predictor("o_a", X, y, NAMES, NAMES, X[0], float(y[0]), LEVELS, opts,
                         physical=PHYSICAL)


def test_a_product_of_powers_is_found_from_a_dozen_runs() -> None:
    X, y = sample(12)
    found = fit(X, y, power_first=True)
    assert found.response == "log"
    labels = {t.label for t in found.terms}
    assert {"log(mhz)", "log(share)"} <= labels
    assert found.loo_mape < 3.0
    assert found.loo_mape <= fit(X, y, power_first=False).loo_mape


def test_it_is_taken_only_where_it_cuts_the_error() -> None:
    """An additive run time (no product of powers): the start does not replace the form."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.choice(LEVELS[a], 20) for a in NAMES])
    y = 2.0 + 3.0 * X[:, 2] / 100.0 + rng.normal(0.0, 0.01, 20)
    plain, power = fit(X, y, False), fit(X, y, True)
    assert power.response == plain.response and power.terms == plain.terms


def test_the_option_must_be_true_or_false() -> None:
    with pytest.raises(ConfigError, match="predictors.power_first must be true or false"):
        PredictorOptions.from_dict({"power_first": "yes"})
    assert PredictorOptions.from_dict({"power_first": True}).to_dict()["power_first"] is True
