"""benchmarks.learning.uncertainty: bootstrap intervals over applications."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.learning.uncertainty import bootstrap, by_case, interval, main, resample


def _rec(design: str, case: str, seed: int, mape10: float, honesty: float) -> dict:
    """A real-suite campaign record with what summarize() reads."""
    return {"design": design, "case": case, "seed": seed, "exit": 0, "wall_s": 1.0,
            "final_mape": mape10 / 2, "runs": 10, "stop_pct_time": 50.0, "honesty": honesty,
            "judge_inside": 9, "judge_runs": 10,
            "marks": {str(m): {"mape": mape10 * (1 - m)} for m in (0.1, 0.2, 0.3)}}


def _records(shift: float) -> list[dict]:
    """Ten applications x two seeds; design "b" is "a" shifted by ``shift`` points."""
    rng = np.random.default_rng(3)
    out = []
    for c in range(10):
        for seed in (1, 2):
            m = float(rng.uniform(5, 30))
            out += [_rec("a", f"c{c}", seed, m, 1.0), _rec("b", f"c{c}", seed, m + shift, 1.0)]
    return out


def test_resample_draws_whole_applications_with_distinct_names():
    records = _records(0.0)
    drawn = resample(by_case(records), np.random.default_rng(0))
    assert len(drawn) == len(records)  # as many applications, each with all its campaigns
    names = {r["case"] for r in drawn}
    assert len(names) == 10  # a case drawn twice gets two names
    for name in names:
        group = [r for r in drawn if r["case"] == name]
        assert sorted((r["design"], r["seed"]) for r in group) == [
            ("a", 1), ("a", 2), ("b", 1), ("b", 2)]


def test_interval_is_the_central_percentile_range_of_finite_values():
    lo, hi = interval([float(v) for v in range(101)] + [float("nan")], level=0.9)
    assert (lo, hi) == pytest.approx((5.0, 95.0))
    assert np.isnan(interval([float("nan")])[0])


def test_a_constant_shift_between_paired_designs_has_a_tight_difference_interval():
    result = bootstrap(_records(2.0), generated=False, against="a", draws=200)
    row = result["b"]["MAPE at 10% of configs (%)"]
    assert row["difference"] == pytest.approx(2 * 0.9)
    lo, hi = row["difference_interval"]
    assert lo == pytest.approx(1.8) and hi == pytest.approx(1.8)  # paired: no spread
    lo, hi = row["interval"]  # the figure itself varies with the applications drawn
    assert lo < row["value"] < hi
    same = bootstrap(_records(0.0), generated=False, against="a", draws=50)
    assert same["b"]["MAPE at 10% of configs (%)"]["difference_interval"] == (0.0, 0.0)


def test_cli_reports_and_refuses_an_unknown_design(tmp_path, capsys):
    out = tmp_path / "o.json"
    out.write_text(json.dumps({"suite": "scout", "records": _records(1.0)}))
    assert main([str(out), "--against", "a", "--draws", "50"]) == 0
    text = capsys.readouterr().out
    assert "scout: 10 applications, 40 campaigns, 50 bootstrap draws" in text
    assert "minus a: +0.90" in text
    assert main([str(out), "--against", "nope"]) == 2
    assert "'nope' is not a design" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert main([str(tmp_path / "bad.json")]) == 2
