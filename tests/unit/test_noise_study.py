"""benchmarks.learning.noise_study: the internal error less one measurement's noise."""

from __future__ import annotations

import math

from benchmarks.learning.noise_study import HALF_NORMAL, _carry, deducted, noise_figures


def test_the_noise_is_taken_out_in_quadrature_and_never_below_half():
    values = deducted("noise_resid")
    sigma = 0.03  # a 3% log-normal noise: its mean absolute error is 100 * 0.8 * 0.03 = 2.4%
    noise = 100 * HALF_NORMAL * sigma
    assert math.isclose(values({"internal_error_pct": 5.0, "_noise_resid": sigma ** 2}),
                        math.sqrt(25.0 - noise ** 2))
    assert values({"internal_error_pct": 2.0, "_noise_resid": sigma ** 2}) == 1.0  # half
    assert values({"internal_error_pct": 5.0, "_noise_resid": None}) == 5.0
    assert values({"internal_error_pct": None, "_noise_resid": 0.01}) is None


def test_the_last_known_noise_carries_over_iterations_without_one():
    its = [{"noise_resid": None, "noise_logt": None}, {"noise_resid": 0.01, "noise_logt": None},
           {"noise_resid": None, "noise_logt": 0.02}]
    carried = _carry(its)
    assert [it["_noise_resid"] for it in carried] == [None, 0.01, 0.01]
    assert [it["_noise_logt"] for it in carried] == [None, None, 0.02]
    assert all("_noise_resid" not in it for it in its)  # the input is left as it was


class _Hyper:
    noise = 0.004


class _Blend:
    _hyper = (10, _Hyper())


class _Learner:
    n = 12
    _hyper = (12, _Hyper())
    _blend = _Blend()
    _cv_cache = (11, (6.0, {}), None)  # computed before the last run: not this count's
    _fixed_cache = (12, 4.0)


def test_figures_read_the_caches_the_fold_errors_only_at_this_count():
    figures = noise_figures(_Learner())
    assert figures == {"noise_resid": 0.004, "noise_logt": 0.004, "cv_plain": None,
                       "cv_fixed": 4.0}
