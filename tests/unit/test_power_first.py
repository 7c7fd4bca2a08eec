"""``predictors.power_first``: the term search that starts among the log main effects finds a
product of powers the plain greedy search misses at small samples (tuning gen649); its
``power_log_log`` and ``power_until`` variants, and ``log_pairs`` (interactions on log y among
log factors only)."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.predictors.fit import _main_candidates
from nimo.predictors.power import power_first

NAMES = ("mhz", "share", "disk")
LEVELS = {"mhz": [1010.0, 1150.0, 1240.0, 1250.0, 2510.0, 3240.0],
          "share": [0.292, 0.534, 0.936, 0.952], "disk": [59.8, 61.0, 207.0, 325.0, 473.0]}
PHYSICAL = {a: "reciprocal" for a in NAMES}
X_SCALE = np.array([1000.0, 1.0, 300.0])


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



def test_log_log_keeps_the_form_a_product_of_powers() -> None:
    """``power_log_log``: the search after the start offers only log terms and their
    products, never an identity, reciprocal or hinge on log y (exp(b x), which extrapolates
    wildly: tuning gen750); without it the same data take such a term."""
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.choice(LEVELS[a], 24) for a in NAMES]) / X_SCALE
    y = X[:, 0] ** -0.73 / X[:, 1] * np.exp(X[:, 2] * 2.0) * rng.lognormal(0.0, 0.01, 24)
    columns = {a: X[:, i] for i, a in enumerate(NAMES)}
    levels = {a: np.asarray(LEVELS[a]) / s for a, s in zip(NAMES, X_SCALE, strict=True)}

    def factors(log_log: bool) -> set[tuple[str, float | None]]:
        opts = PredictorOptions(mode="auto", power_first=True, power_log_log=log_log)
        pool, smooth = _main_candidates(columns, levels, opts.transforms)
        found = power_first(pool, np.log(y), y, np.ones_like(y), 1.0, opts, smooth,
                            columns, {})
        assert found is not None
        return {(f.transform, f.knot) for t in found[1] for f in t.factors}

    assert factors(True) == {("log", None)}
    assert factors(False) != {("log", None)}


def test_power_until_limits_the_start_to_small_samples() -> None:
    """``power_until`` n: the power-law search runs only while a fit has fewer than n
    samples; from n on the form is the plain search's."""
    X, y = sample(12)

    def terms(**kw: object) -> list[str]:
        opts = PredictorOptions(mode="auto", physical=True, **kw)  # type: ignore[arg-type]
        found = fit_predictor("o_a", X, y, NAMES, NAMES, X[0], float(y[0]), LEVELS, opts,
                              physical=PHYSICAL)
        return [t.label for t in found.terms]

    plain, power = terms(), terms(power_first=True)
    assert plain != power
    assert terms(power_first=True, power_until=13) == power
    assert terms(power_first=True, power_until=12) == plain
    with pytest.raises(ConfigError, match="power_until must be >= 0"):
        PredictorOptions.from_dict({"power_until": -1})


def test_log_pairs_keeps_interactions_on_log_y_among_log_factors() -> None:
    """``log_pairs``: on log y an interaction is a product of log factors; an identity or
    reciprocal product there is exp(b x z), 100 times off at a corner no run combined
    (tuning gen919). Without it the same data take such a product."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.choice(LEVELS[a], 30) for a in NAMES])
    y = np.exp(X[:, 1] * X[:, 2] / 200.0) * (1000.0 / X[:, 0]) * rng.lognormal(0.0, 0.01, 30)

    def pairs(log_pairs: bool) -> set[str]:
        opts = PredictorOptions(mode="auto", log_pairs=log_pairs)
        found = fit_predictor("o_a", X, y, NAMES, NAMES, X[0], float(y[0]), LEVELS, opts)
        assert found.response == "log"
        return {f.transform for t in found.terms if len(t.factors) > 1 for f in t.factors}

    assert pairs(True) <= {"log"}
    assert pairs(False) - {"log"}
