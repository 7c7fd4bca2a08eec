"""fit_predictor: transform recovery, selection without overfitting, options."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nimo.errors import ConfigError, DataError
from nimo.predictors import PredictorOptions, fit_predictor

CPU = [451.0, 797.0, 930.0, 996.0, 1396.0]
MEM = [64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0]
LAT = [0.0, 2.0, 6.0, 10.0, 14.0, 18.0]
NAMES = ("cpu", "mem", "lat")
LEVELS = {"cpu": CPU, "mem": MEM, "lat": LAT}
REF = (930.0, 512.0, 6.0)


def oat(attr: str, values=None) -> np.ndarray:
    """L_max-I_1 rows: the reference plus ``attr`` at each of its levels."""
    j = NAMES.index(attr)
    rows = [list(REF)]
    for v in values or LEVELS[attr]:
        row = list(REF)
        row[j] = v
        rows.append(row)
    return np.array(rows)


def fit(target, X, y, active, **opts):
    return fit_predictor(target, X, y, NAMES, active, REF, float(y[0]), LEVELS,
                         PredictorOptions(**opts))


def labels(p) -> list[str]:
    return [t.label for t in p.terms]


def test_reciprocal_recovers_c_over_cpu() -> None:
    X = oat("cpu")
    y = 450.0 / X[:, 0]
    p = fit("o_a", X, y, ["cpu"])
    assert labels(p) == ["reciprocal(cpu)"] and p.response == "identity"
    grid = np.array([[c, 512.0, 6.0] for c in np.linspace(451, 1396, 11)])
    np.testing.assert_allclose(p.predict(grid), 450.0 / grid[:, 0], rtol=1e-9)
    assert p.loo_mape < 1e-6


def test_hinge_recovers_memory_cliff() -> None:
    X = oat("mem")
    y = 2.0 + 0.01 * np.maximum(0.0, 256.0 - X[:, 1])  # paging below a 256 MB working set
    p = fit("o_a", X, y, ["mem"], log_response=False)
    assert any(t.factors[0].transform.startswith("piecewise") for t in p.terms)
    np.testing.assert_allclose(p.predict(X), y, rtol=1e-9)
    assert p.loo_mape < 1e-6


def test_hinge_recovers_saturation() -> None:
    X = oat("cpu")
    y = 3.0 - 0.002 * np.minimum(X[:, 0], 930.0)  # no gain beyond 930 MHz
    p = fit("o_a", X, y, ["cpu"])
    assert [t.factors[0].transform for t in p.terms] == ["piecewise_below"]
    np.testing.assert_allclose(p.predict(X), y, rtol=1e-9)


def test_log_transform_recovered() -> None:
    X = oat("mem")
    y = 5.0 - 0.5 * np.log(X[:, 1] / 512.0)
    p = fit("o_a", X, y, ["mem"])
    assert "log(mem)" in labels(p)
    np.testing.assert_allclose(p.predict(X), y, rtol=1e-9)


def test_interaction_from_full_factorial() -> None:
    X = np.array([[c, 512.0, lat] for c, lat in itertools.product(CPU, LAT)])
    # prefetching: latency costs more the faster the CPU asks for data
    y = 1.0 + 400.0 / X[:, 0] + 0.02 * X[:, 2] * X[:, 0] / 930.0
    p = fit("o_n", X, y, ["cpu", "lat"])
    assert any(t.is_interaction for t in p.terms)
    np.testing.assert_allclose(p.predict(X), y, rtol=1e-8)
    assert p.loo_mape < 1e-6


def test_interaction_not_identifiable_in_oat_design() -> None:
    X = np.vstack([oat("cpu"), oat("lat")[1:]])
    y = 1.0 + 400.0 / X[:, 0] + 0.02 * X[:, 2] * X[:, 0] / 930.0
    p = fit("o_n", X, y, ["cpu", "lat"])
    assert not any(t.is_interaction for t in p.terms)
    assert np.isfinite(p.params).all() and np.isfinite(p.cov).all()
    np.testing.assert_allclose(p.predict(X), y, rtol=1e-8)  # additive on OAT rows


@pytest.mark.parametrize("seed", range(8))
def test_pure_noise_keeps_few_terms(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.choice(LEVELS[a], 30) for a in NAMES])
    y = 5.0 + 0.05 * rng.standard_normal(30)
    p = fit("o_a", X, y, list(NAMES))
    assert len(p.terms) <= 1, labels(p)


def test_noisy_signal_is_found() -> None:
    rng = np.random.default_rng(11)
    X = np.column_stack([rng.choice(LEVELS[a], 40) for a in NAMES])
    y = (300.0 / X[:, 0]) * (1 + 0.02 * rng.standard_normal(40))
    p = fit("o_a", X, y, list(NAMES))
    assert [t.attrs for t in p.terms] == [("cpu",)]
    assert p.loo_mape < 5.0


def test_paper_mode_one_identity_or_reciprocal_term_per_attribute() -> None:
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.choice(LEVELS[a], 25) for a in NAMES])
    y = 2.0 + 500.0 / X[:, 0] + 0.001 * X[:, 1] + 0.01 * rng.standard_normal(25)
    p = fit("o_a", X, y, list(NAMES), mode="paper")
    assert [t.attrs[0] for t in p.terms] == list(NAMES)
    assert {t.factors[0].transform for t in p.terms} <= {"identity", "reciprocal"}
    assert p.terms[0].factors[0].transform == "reciprocal"
    assert p.response == "identity"


def test_statsmodels_and_numpy_final_fits_agree() -> None:
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.choice(LEVELS[a], 30) for a in NAMES])
    y = 1.0 + 300.0 / X[:, 0] + 0.05 * rng.standard_normal(30)
    a = fit("o_a", X, y, list(NAMES), final_fit="statsmodels")
    b = fit("o_a", X, y, list(NAMES), final_fit="numpy")
    assert labels(a) == labels(b)
    np.testing.assert_allclose(a.params, b.params, rtol=1e-10)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-8)
    assert a.dof == b.dof == 30 - len(a.params)
    assert a.resid_var == pytest.approx(b.resid_var, rel=1e-10)


def test_zero_reference_target_and_latency() -> None:
    X = oat("lat")
    y = 0.1 * X[:, 2]  # o_d is 0 at latency 0 ... and the reference is at 6 ms
    p = fit_predictor("o_d", X, y, NAMES, ["lat"], (930.0, 512.0, 0.0), 0.0, LEVELS)
    assert p.scale == (18.0,)  # latency reference 0 -> largest level
    assert p.y_scale > 0
    np.testing.assert_allclose(p.predict(X), y, atol=1e-12)


def test_all_zero_target_gives_zero_constant() -> None:
    X = oat("cpu")
    p = fit_predictor("o_d", X, np.zeros(len(X)), NAMES, ["cpu"], REF, 0.0, LEVELS)
    assert p.is_constant
    np.testing.assert_array_equal(p.predict(X), 0.0)


def test_single_sample_and_no_attributes_give_constants() -> None:
    X = np.array([REF])
    p = fit("D", X, np.array([7.0]), ["cpu"])
    assert p.is_constant and p.predict(X)[0] == pytest.approx(7.0)
    assert p.dof == 0 and np.isnan(p.predict_var(X)[0])
    q = fit("D", oat("cpu"), np.arange(1.0, 7.0), [], log_response=False)
    assert q.is_constant and q.predict(X)[0] == pytest.approx(3.5)
    assert q.dof == 5


def test_bad_input_raises_data_error() -> None:
    X = oat("cpu")
    with pytest.raises(DataError, match="unknown attribute 'disk'"):
        fit("o_a", X, X[:, 0], ["disk"])
    with pytest.raises(DataError, match="unknown target"):
        fit_predictor("o_x", X, X[:, 0], NAMES, [], REF, 1.0, LEVELS)
    with pytest.raises(DataError, match="non-finite"):
        fit("o_a", X, np.full(len(X), np.nan), ["cpu"])


def test_options_from_dict() -> None:
    o = PredictorOptions.from_dict({"mode": "paper", "transforms": "reciprocal",
                                    "min_improvement": "0.05"})
    assert o.mode == "paper" and o.transforms == ("reciprocal",) and o.min_improvement == 0.05
    assert PredictorOptions.from_dict(None) == PredictorOptions()
    assert PredictorOptions.from_dict(o.to_dict()) == o
    with pytest.raises(ConfigError, match="unknown key") as e:
        PredictorOptions.from_dict({"mod": "auto"})
    assert "min_improvement" in str(e.value) and "interactions" in str(e.value)
    with pytest.raises(ConfigError, match="transforms"):
        PredictorOptions(transforms=("square",))
    with pytest.raises(ConfigError, match="mode"):
        PredictorOptions.from_dict({"mode": "magic"})
    with pytest.raises(ConfigError, match="true or false"):
        PredictorOptions.from_dict({"interactions": "yes"})


def test_step_cliff_needs_two_hinges() -> None:
    X = oat("mem")
    y = 2.0 + 3.0 * (X[:, 1] < 300.0)  # thrashing below a 300 MB working set: a step
    p = fit("o_a", X, y, ["mem"])
    assert len(p.terms) == 2 and all(t.factors[0].knot is not None for t in p.terms)
    np.testing.assert_allclose(p.predict(X), y, atol=1e-9)


def test_with_step_a_cliff_is_one_jump_term() -> None:
    X = oat("mem")
    y = 2.0 + 3.0 * (X[:, 1] < 300.0)
    p = fit("o_a", X, y, ["mem"], transforms=("identity", "reciprocal", "log", "piecewise",
                                              "step"))
    assert [t.factors[0].transform for t in p.terms] == ["step_below"]
    knot = p.terms[0].factors[0].knot * 512.0  # normalised by the reference, 512 MB
    assert 256.0 < knot < 512.0  # between the last level under the cliff and the first above
    np.testing.assert_allclose(p.predict(X), y, atol=1e-9)


def test_step_is_offered_only_when_named() -> None:
    assert "step" not in PredictorOptions().transforms
    with pytest.raises(ConfigError, match="valid: .*step"):
        PredictorOptions.from_dict({"transforms": ["identity", "steps"]})


def test_oat_plus_corner_rows_identify_the_interaction() -> None:
    """L_max-I_1 rows plus the four 2-level corners (as a PB foldover would add)."""
    corners = np.array([[c, 512.0, lat] for c in (451.0, 1396.0) for lat in (0.0, 18.0)])
    X = np.vstack([oat("cpu"), oat("lat")[1:], corners])
    f = lambda X: 1.0 + 400.0 / X[:, 0] + 0.02 * X[:, 2] * X[:, 0] / 930.0  # noqa: E731
    p = fit("o_n", X, f(X), ["cpu", "lat"])
    assert any(t.is_interaction for t in p.terms)
    grid = np.array([[c, 512.0, lat] for c, lat in itertools.product(CPU, LAT)])
    np.testing.assert_allclose(p.predict(grid), f(grid), rtol=1e-6)


def test_interaction_candidates_only_where_identifiable() -> None:
    from nimo.model.features import Term
    from nimo.predictors.interactions import interaction_candidates

    terms = [Term.main("cpu"), Term.main("lat")]
    smooth = {"cpu": ["identity", "reciprocal"], "lat": ["identity"]}
    oat_rows = np.vstack([oat("cpu"), oat("lat")[1:]]) / np.array(REF)
    full = np.array(list(itertools.product(CPU, [512.0], LAT))) / np.array(REF)
    for Z, expected in ((oat_rows, 0), (full, 2)):
        cols = {a: Z[:, j] for j, a in enumerate(NAMES)}
        done: set = set()
        got = list(interaction_candidates(terms, smooth, cols, {}, done))
        assert len(got) == expected
        assert list(interaction_candidates(terms, smooth, cols, {}, done)) == []  # pair done


def test_a_log_response_far_out_of_range_predicts_inf_without_a_warning() -> None:
    """exp overflows far outside the data: inf (the model's bounds hold it), and no numpy
    RuntimeWarning reaches the user's terminal."""
    import dataclasses
    import warnings

    X = oat("cpu")
    p = fit("o_a", X, np.exp(0.01 * X[:, 0]), ["cpu"])
    huge = dataclasses.replace(p, response="log", params=np.full_like(p.params, 800.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = huge.predict(np.array([[1396.0, 512.0, 6.0]]))
        var = huge.predict_var(np.array([[1396.0, 512.0, 6.0]]))
    assert np.isinf(out[0]) and out[0] > 0
    assert not np.isfinite(var[0])


def test_a_rank_deficient_final_fit_warns_nobody() -> None:
    """statsmodels' SingularMatrixWarning (a column twice, or one spanning 1e16) reached the
    user's terminal; the fit on the column space is what the model wants."""
    import warnings

    from nimo.predictors.fit import _final_fit

    A = np.column_stack([np.ones(10), np.arange(10.0), 2 * np.arange(10.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        params, cov, s2, dof = _final_fit(A, 3 * np.arange(10.0) + 1, "statsmodels")
    assert A @ params == pytest.approx(3 * np.arange(10.0) + 1) and dof == 8
