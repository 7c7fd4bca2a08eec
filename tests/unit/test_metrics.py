"""The error measures of nimo.metrics: floors, caps and their per-point form."""

from __future__ import annotations

import math

import numpy as np

from nimo.finite import finite_document, finite_or_none
from nimo.metrics import internal_apes, internal_error_pct, mape_pct, median_ape_pct


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


def test_median_ape_is_the_middle_error_and_none_when_it_cannot_be_told() -> None:
    assert median_ape_pct(np.array([10.0, 10.0, 10.0]), np.array([11.0, 10.0, 30.0])) == 10.0
    assert median_ape_pct(np.array([]), np.array([])) is None
    assert median_ape_pct(np.array([10.0]), np.array([math.nan])) is None


def test_finite_or_none_keeps_finite_numbers_only() -> None:
    assert finite_or_none(np.float64(2.5)) == 2.5 and finite_or_none(3) == 3.0
    for value in (None, math.nan, math.inf, -math.inf, "1.5", [1.0], object()):
        assert finite_or_none(value) is None, value


def test_a_finite_document_has_no_nan_at_any_depth_and_string_keys() -> None:
    doc = {"a": [1.0, math.nan, {"b": math.inf}], 2: (3, "x", None)}
    assert finite_document(doc) == {"a": [1.0, None, {"b": None}], "2": [3, "x", None]}
