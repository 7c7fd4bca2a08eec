"""Plackett-Burman with foldover (Appendix A)."""

import itertools

import numpy as np
import pytest

from nimo.doe import effects, foldover, pb_design, pbdf_design, rank
from nimo.errors import ConfigError


@pytest.mark.parametrize("factors", range(3, 48))
def test_columns_are_balanced_and_orthogonal(factors):
    d = pb_design(factors)
    n = d.shape[0]
    assert n % 4 == 0 and n > factors and n - 4 <= factors
    assert set(np.unique(d)) == {-1, 1}
    assert (d.sum(axis=0) == 0).all()
    assert (d.T @ d == n * np.eye(factors)).all()


@pytest.mark.parametrize("factors", [3, 7, 11, 19, 23, 27, 35, 39, 47])
def test_foldover_makes_main_effects_orthogonal_to_two_factor_interactions(factors):
    d = pbdf_design(factors)
    assert d.shape[0] == 2 * pb_design(factors).shape[0]
    for i, j in itertools.combinations(range(factors), 2):
        inter = d[:, i] * d[:, j]
        assert (d.T @ inter == 0).all(), (i, j)


def test_without_foldover_some_main_effect_is_aliased_with_an_interaction():
    d = pb_design(7)
    aliased = any((d.T @ (d[:, i] * d[:, j]) != 0).any()
                  for i, j in itertools.combinations(range(7), 2))
    assert aliased


def test_paper_table3_rows_for_seven_factors():
    d = pbdf_design(7)
    assert d.shape == (16, 7)
    assert d[0].tolist() == [1, 1, 1, -1, 1, -1, -1]
    assert d[1].tolist() == [-1, 1, 1, 1, -1, 1, -1]
    assert d[2].tolist() == [-1, -1, 1, 1, 1, -1, 1]
    assert d[14].tolist() == [-1, -1, 1, -1, 1, 1, -1]
    assert d[15].tolist() == [1] * 7


def test_effects_and_rank_recover_the_influential_factors():
    d = pbdf_design(5)
    y = 10 + 4 * d[:, 2] - 2 * d[:, 0] + 0.5 * d[:, 4]
    e = effects(d, y)
    assert e[2] == pytest.approx(4 * d.shape[0])
    assert rank(d, y)[:3] == [2, 0, 4]


def test_foldover_negates_rows():
    d = pb_design(3)
    assert (foldover(d)[len(d):] == -d).all()


def test_bad_factor_counts_raise():
    with pytest.raises(ConfigError):
        pb_design(0)
    with pytest.raises(ConfigError):
        effects(pb_design(3), np.ones(3))
