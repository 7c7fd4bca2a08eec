"""Attributes measured at many distinct levels (continuous values in a CSV for ``nimo model
fit``): the term search stays bounded and its shortcuts decide as the full computation."""

from __future__ import annotations

import numpy as np

from nimo.model.features import KNOTTED
from nimo.predictors import interactions
from nimo.predictors.fit import MAX_KNOTS, _main_candidates, spread_levels


def _svd_additive_basis(za: np.ndarray, zb: np.ndarray):
    """The additive-basis test by its definition: the rank of the cell-level incidence."""
    cells = np.unique(np.column_stack([za, zb]), axis=0)
    _, ia = np.unique(cells[:, 0], return_inverse=True)
    lb, ib = np.unique(cells[:, 1], return_inverse=True)
    M = np.zeros((len(cells), ia.max() + 1 + len(lb)))
    M[np.arange(len(cells)), ia] = 1.0
    M[np.arange(len(cells)), ia.max() + 1 + ib] = 1.0
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    U = U[:, s > 1e-10 * s[0]]
    return None if U.shape[1] >= len(cells) else (cells, U)


def test_the_forest_shortcut_decides_as_the_rank_of_the_incidence():
    rng = np.random.default_rng(7)
    identifiable = 0
    for case in range(600):
        n = int(rng.integers(1, 30))
        za = rng.integers(0, int(rng.integers(1, 7)), n).astype(float)
        zb = rng.integers(0, int(rng.integers(1, 7)), n).astype(float)
        if case % 4 == 0:
            za = rng.random(n)  # every level distinct: nothing identifiable
        got, want = interactions._additive_basis(za, zb), _svd_additive_basis(za, zb)
        assert (got is None) == (want is None)
        if got is not None:
            identifiable += 1
            assert np.array_equal(got[0], want[0]) and np.allclose(got[1], want[1])
    assert 50 < identifiable < 600  # both branches were exercised


def test_spread_levels_keeps_few_levels_and_thins_many_evenly():
    few = np.arange(40.0)
    assert spread_levels(few) is few
    many = np.sort(np.random.default_rng(1).random(5000))
    kept = spread_levels(many)
    assert kept.size == MAX_KNOTS and kept[0] == many[0] and kept[-1] == many[-1]
    gaps = np.diff(np.searchsorted(many, kept))
    assert gaps.max() - gaps.min() <= 1  # evenly spread by rank


def test_hinges_and_steps_are_bounded_for_an_attribute_at_many_levels():
    z = np.random.default_rng(2).uniform(1.0, 10.0, 3000)
    pool, _ = _main_candidates({"x": z}, {"x": np.array([1.0, 10.0])},
                               ("identity", "reciprocal", "log", "piecewise", "step"))
    knotted = [c for c in pool if c.term.factors[0].transform in KNOTTED]
    steps = [c for c in pool if c.term.factors[0].transform == "step_below"]
    assert 0 < len(knotted) <= MAX_KNOTS * len(KNOTTED) and 0 < len(steps) <= MAX_KNOTS
