"""The learning benchmark's honesty figures: median, tails and spread of ext/int."""

from __future__ import annotations

import math

from benchmarks.learning.report import _spread, honesty_figures


def test_spread_is_the_sd_of_log_ratios_and_tails_are_shares():
    got = honesty_figures([0.5, 2.0, None, 2.5, 0.4], "honesty")
    assert got["honesty_n"] == 4
    assert got["honesty_median"] == (0.5 + 2.0) / 2
    assert got["honesty_over_2"] == 0.25 and got["honesty_under_half"] == 0.25
    logs = [math.log(h) for h in (0.5, 2.0, 2.5, 0.4)]
    mean = sum(logs) / 4
    assert math.isclose(got["honesty_sd_log"],
                        math.sqrt(sum((v - mean) ** 2 for v in logs) / 4))


def test_a_constant_shift_moves_the_median_not_the_spread():
    base = honesty_figures([0.3, 0.8, 1.1, 2.4], "h")
    shifted = honesty_figures([h * 1.25 for h in (0.3, 0.8, 1.1, 2.4)], "h")
    assert math.isclose(base["h_sd_log"], shifted["h_sd_log"])
    assert shifted["h_median"] > base["h_median"]


def test_no_ratio_gives_empty_figures_and_dashes():
    got = honesty_figures([None, None], "space_honesty")
    assert got["space_honesty_n"] == 0
    assert math.isnan(got["space_honesty_median"]) and math.isnan(got["space_honesty_sd_log"])
    assert _spread(got, "space_honesty").split() == ["-%", "-%", "-"]


def test_space_coverage_pools_the_runs_of_every_campaign():
    from benchmarks.learning.report import _space

    ok = [{"space_inside": 9, "space_runs": 10}, {"space_inside": 1, "space_runs": 10},
          {"space_honesty": 1.0}]  # a record from before the column: no runs, no weight
    assert _space(ok, ok)["space_coverage_pooled"] == 0.5
    assert math.isnan(_space(ok[2:], ok[2:])["space_coverage_pooled"])
