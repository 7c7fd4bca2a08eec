"""The error measures of nimo.metrics: floors, caps and their per-point form."""

from __future__ import annotations

import math

import numpy as np

from nimo.metrics import internal_apes, internal_error_pct, mape_pct


def test_internal_apes_floor_small_denominators_at_five_percent_of_the_mean() -> None:
    actual = np.array([100.0, 100.0, 0.0, 100.0])  # mean 75: floor 3.75
    predicted = np.array([110.0, 90.0, 3.75, 100.0])
    assert np.allclose(internal_apes(actual, predicted), [10.0, 10.0, 100.0, 0.0])


def test_internal_apes_cap_each_point_and_the_mean_is_the_internal_error() -> None:
    actual = np.array([10.0, 10.0, 10.0])
    predicted = np.array([40.0, 11.0, 10.0])
    capped = internal_apes(actual, predicted, cap_pct=100.0)
    assert np.allclose(capped, [100.0, 10.0, 0.0])
    assert internal_error_pct(actual, predicted, cap_pct=100.0) == float(np.mean(capped))
    assert internal_error_pct(actual, predicted) == float(np.mean([300.0, 10.0, 0.0]))


def test_empty_inputs_give_nan_and_none() -> None:
    assert internal_apes(np.empty(0), np.empty(0)).size == 0
    assert math.isnan(internal_error_pct(np.empty(0), np.empty(0)))
    assert mape_pct(np.empty(0), np.empty(0)) is None
