"""benchmarks.learning.trial: a trial design against a baseline, campaign by campaign."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.learning.trial import by_campaign, column, gained_and_lost, main


def _rec(design: str, case: str, seed: int, reached: bool, reach_run: int | None,
         final: float, honesty: float | None) -> dict:
    return {"design": design, "case": case, "seed": seed, "reached_within": reached,
            "reach_run": reach_run, "final_mape": final, "honesty": honesty}


BASE = [_rec("recommended", "g1", 1, True, 8, 3.0, 0.8),
        _rec("recommended", "g1", 2, False, None, 12.0, 2.5),
        _rec("recommended", "g2", 1, True, 12, 4.0, 1.0),
        _rec("recommended", "g3", 1, True, 5, 2.0, 0.5)]  # no partner: left out of the report
NEW = [_rec("trial", "g1", 1, False, 30, 60.0, 3.0),
       _rec("trial", "g1", 2, True, 20, 5.0, 1.0),
       _rec("trial", "g2", 1, True, 10, 4.5, None)]


def test_the_columns_count_never_reached_as_infinite_runs() -> None:
    c = column(by_campaign(BASE, "recommended"))
    assert (c.campaigns, c.reach_keep, c.above_2, c.finals_above_10, c.finals_above_50) == (
        4, 3, 1, 1, 0)
    assert c.runs_to_reach == 10.0 and c.final_mape == 3.5  # medians of 8, inf, 12, 5 / finals
    only_missed = column({("g", 1): BASE[1]})
    assert math.isinf(only_missed.runs_to_reach)


def test_gained_and_lost_pair_by_case_and_seed() -> None:
    gained, lost = gained_and_lost(by_campaign(BASE, "recommended"), by_campaign(NEW, None))
    assert gained == [("g1", 2)] and lost == [("g1", 1)]


def test_a_design_must_be_named_when_a_file_holds_several() -> None:
    with pytest.raises(ValueError, match="several designs"):
        by_campaign(BASE + NEW, None)
    with pytest.raises(ValueError, match="no campaign of design 'other'"):
        by_campaign(NEW, "other")


def test_cli_prints_the_rule_columns_and_fails_without_shared_campaigns(tmp_path, capsys
                                                                         ) -> None:
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    base.write_text(json.dumps({"records": BASE}))
    new.write_text(json.dumps({"records": NEW}))
    assert main([str(base), str(new)]) == 0
    out = capsys.readouterr().out
    assert "3 campaigns on both sides" in out  # g3 has no partner
    assert "gained (1): g1 s2" in out and "lost (1): g1 s1" in out
    row = next(line for line in out.splitlines() if line.startswith("trial"))
    assert row.split()[1:3] == ["2", "of"] and row.split()[-2:] == ["1", "1"]
    elsewhere = tmp_path / "other.json"
    elsewhere.write_text(json.dumps({"records": [_rec("trial", "x", 9, True, 3, 1.0, 1.0)]}))
    assert main([str(base), str(elsewhere)]) == 1
    assert "no campaign on the same case and seed" in capsys.readouterr().err
    assert main([str(base), str(tmp_path / "missing.json")]) == 1
