"""Term specifications and their numpy evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ModelError
from nimo.model.features import Factor, Term, attribute_scale, design_matrix

Z = np.array([[0.5, 0.0], [1.0, 0.5], [2.0, 1.0]])
NAMES = ("cpu", "lat")


@pytest.mark.parametrize(
    ("factor", "expected"),
    [
        (Factor("cpu"), [0.5, 1.0, 2.0]),
        (Factor("cpu", "reciprocal"), [2.0, 1.0, 0.5]),
        (Factor("cpu", "log"), np.log([0.5, 1.0, 2.0])),
        (Factor("cpu", "piecewise", 1.0), [0.0, 0.0, 1.0]),
        (Factor("cpu", "piecewise_below", 1.0), [0.5, 0.0, 0.0]),
        (Factor("cpu", "step_below", 1.0), [1.0, 0.0, 0.0]),
        (Factor("cpu", "step_below", 1.5), [1.0, 1.0, 0.0]),
    ],
)
def test_transform_values(factor: Factor, expected) -> None:
    np.testing.assert_allclose(factor.evaluate(Z[:, 0]), expected, rtol=0, atol=1e-15)


def test_design_matrix_has_intercept_and_interaction() -> None:
    terms = [Term.main("cpu", "reciprocal"), Term.interaction(Factor("cpu"), Factor("lat"))]
    A = design_matrix(terms, Z, NAMES)
    assert A.shape == (3, 3)
    np.testing.assert_array_equal(A[:, 0], 1.0)
    np.testing.assert_allclose(A[:, 1], 1.0 / Z[:, 0])
    np.testing.assert_allclose(A[:, 2], Z[:, 0] * Z[:, 1])


def test_positive_only_transforms_reject_zero() -> None:
    with pytest.raises(ModelError, match="'lat'"):
        design_matrix([Term.main("lat", "reciprocal")], Z, NAMES)
    with pytest.raises(ModelError, match="needs values > 0"):
        Factor("lat", "log").evaluate(np.array([0.0]))


def test_bad_specs_rejected() -> None:
    with pytest.raises(ModelError, match="unknown transform"):
        Factor("cpu", "square")
    with pytest.raises(ModelError, match="knot"):
        Factor("cpu", "piecewise")
    with pytest.raises(ModelError, match="knot"):
        Factor("cpu", "identity", 1.0)
    with pytest.raises(ModelError, match="1 or 2 factors"):
        Term(())
    with pytest.raises(ModelError, match="unknown attribute 'mem'"):
        design_matrix([Term.main("mem")], Z, NAMES)
    with pytest.raises(ModelError, match="2 columns"):
        design_matrix([], Z[:, :1], NAMES)


def test_term_round_trip() -> None:
    terms = [
        Term.main("cpu"),
        Term.main("cpu", "piecewise_below", 0.75),
        Term.interaction(Factor("cpu", "reciprocal"), Factor("lat", "piecewise", 0.5)),
    ]
    back = [Term.from_dict(t.to_dict()) for t in terms]
    assert back == terms
    np.testing.assert_array_equal(design_matrix(back, Z, NAMES), design_matrix(terms, Z, NAMES))
    assert terms[2].is_interaction and terms[2].attrs == ("cpu", "lat")


def test_attribute_scale_guards_zero_reference() -> None:
    assert attribute_scale(930.0, [451, 1396]) == 930.0
    assert attribute_scale(0.0, [0, 2, 18]) == 18.0
    assert attribute_scale(0.0, []) == 1.0


def test_a_step_needs_its_knot_and_round_trips() -> None:
    with pytest.raises(ModelError, match="bad knot"):
        Factor("cpu", "step_below")
    step = Term.main("cpu", "step_below", 0.75)
    assert step.label == "[cpu<0.75]"
    assert Term.from_dict(step.to_dict()) == step
