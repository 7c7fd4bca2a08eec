"""``support+levels+variance``: before its variance picks, every level that a tenth or more
of the candidates hold is measured, as the edges are (nimo.planner.strategies.levels)."""

from __future__ import annotations

from types import SimpleNamespace

from test_planner import SPACE, campaign
from test_support_sampling import RECOMMENDED_LIKE

from nimo.planner.strategies.levels import common_levels, unmeasured_levels
from nimo.space import Attribute, ResourceSpace


def _lopsided() -> ResourceSpace:
    """Of 10 candidates, cpu 1 is held by 3, cpu 2 and 3 by 2, the others by 1; mem 64 by 1,
    mem 128 by 3, mem 512 by 6."""
    cpu = Attribute("cpu", (1.0, 2.0, 3.0, 4.0, 5.0, 6.0))
    mem = Attribute("mem", (64.0, 128.0, 512.0))
    candidates = [(1.0, 64.0), (1.0, 128.0), (2.0, 128.0), (3.0, 128.0),
                  *[(c, 512.0) for c in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)]]
    return ResourceSpace((cpu, mem), candidates)


def test_common_levels_are_those_a_share_of_the_candidates_hold() -> None:
    space = _lopsided()
    assert common_levels(space, 0.10) == [{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {64.0, 128.0, 512.0}]
    assert common_levels(space, 0.15) == [{1.0, 2.0, 3.0}, {128.0, 512.0}]
    assert common_levels(space, 0.25) == [{1.0}, {128.0, 512.0}]


def test_unmeasured_levels_add_the_wanted_ones_to_the_extremes() -> None:
    space = _lopsided()
    view = SimpleNamespace(space=space, measured={(1.0, 512.0), (6.0, 512.0)},
                           in_flight=set(), held_out=set(), taken=lambda: {(1.0, 64.0)})
    assert unmeasured_levels(view) == {}  # type: ignore[arg-type]  # extremes all seen
    wanted = common_levels(space, 0.15)
    assert unmeasured_levels(view, wanted) == {0: {2.0, 3.0}, 1: {128.0}}  # type: ignore[arg-type]


def test_a_levels_campaign_measures_every_common_level_after_the_same_start() -> None:
    design = {**RECOMMENDED_LIKE, "stop": {"error_pct": 0, "max_runs": 20}}
    edges = [a for _, a in campaign({**design, "sampling": "support+edges+variance"},
                                    seed=3)[1].asked]
    levels = [a for _, a in campaign({**design, "sampling": "support+levels+variance"},
                                     seed=3)[1].asked]
    start = 2 * len(SPACE.names) + 2
    assert levels[:start] == edges[:start]
    for i, wanted in enumerate(common_levels(SPACE, 0.10)):
        assert wanted <= {a[i] for a in levels}, SPACE.names[i]
    assert len(levels) == len(set(levels)) == 20
