"""Algorithm 5's binary-search sequence, resource spaces, Algorithm 3 arithmetic."""

import itertools

import numpy as np
import pytest

from nimo.errors import ConfigError, DataError, PlanExhausted
from nimo.planner.sequences import bisection_fractions, lmax_level_order
from nimo.records import occupancies
from nimo.space import Attribute, ResourceSpace


def test_binary_search_sequence_matches_the_paper():
    lo, hi = 0.0, 16.0
    seq = [lo + f * (hi - lo) for f in itertools.islice(bisection_fractions(), 9)]
    expected = [lo, hi, (lo + hi) / 2, (3 * lo + hi) / 4, (lo + 3 * hi) / 4,
                (7 * lo + hi) / 8, (5 * lo + 3 * hi) / 8, (3 * lo + 5 * hi) / 8,
                (lo + 7 * hi) / 8]
    assert seq == expected


def test_level_order_visits_every_level_once_in_bisection_order():
    assert lmax_level_order(range(9)) == [0, 8, 4, 2, 6, 1, 3, 5, 7]
    order = lmax_level_order([64, 128, 256, 512, 1024, 2048])
    assert order[:2] == [64, 2048] and sorted(order) == [64, 128, 256, 512, 1024, 2048]
    assert lmax_level_order([5]) == [5]


def test_space_grid_min_max_and_nearest():
    cpu = Attribute("cpu", (1, 2, 4))
    lat = Attribute("lat", (0, 10, 20), direction=-1, resource="network")
    space = ResourceSpace((cpu, lat))
    assert len(space.candidates) == 9
    assert space.min_capacity() == (1.0, 20.0)
    assert space.max_capacity() == (4.0, 0.0)
    irregular = space.restricted([(1.0, 0.0), (4.0, 20.0), (2.0, 10.0)])
    assert irregular.max_capacity() in irregular.candidates
    assert irregular.nearest((4.0, 0.0), priority=[0]) == (4.0, 20.0)
    assert irregular.nearest((4.0, 0.0), priority=[1]) == (1.0, 0.0)
    with pytest.raises(ConfigError):
        space.index("memory")
    with pytest.raises(ConfigError):
        Attribute("x", (1,), resource="gpu")


def test_algorithm3_solves_for_occupancies_and_splits_stall():
    T, U, D = 100.0, 0.25, 50.0
    occ = occupancies(T, U, D, net_io_s=3.0, disk_io_s=1.0)
    assert occ.o_a == pytest.approx(U * T / D)
    assert occ.o_a / (occ.o_a + occ.o_s) == pytest.approx(U)
    assert D / T == pytest.approx(1.0 / (occ.o_a + occ.o_s))
    assert occ.o_n == pytest.approx(0.75 * occ.o_s) and occ.o_d == pytest.approx(0.25 * occ.o_s)
    assert occ.T == pytest.approx(T)
    whole = occupancies(T, U, D)
    assert whole.o_d == 0.0 and whole.o_n == pytest.approx(occ.o_s)
    with pytest.raises(DataError):
        occupancies(T, 1.5, D)
    with pytest.raises(DataError):
        occupancies(0.0, 0.5, D)


def test_nearest_skips_excluded_and_raises_when_nothing_left():
    space = ResourceSpace((Attribute("a", (1, 2)),))
    assert space.nearest((1,), exclude=[(1.0,)]) == (2.0,)
    with pytest.raises(PlanExhausted):
        space.nearest((1,), exclude=[(1.0,), (2.0,)])
    assert np.isclose(space._scale(np.array([1.5]))[0, 0], 0.5)
