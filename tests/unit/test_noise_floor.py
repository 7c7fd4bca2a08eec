"""The noise floor of generated applications (benchmarks/learning/noise_floor.py): the true
model's external error, on the campaign's own external test set, and its report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.learning import appgen
from benchmarks.learning.noise_floor import band_of, campaign_floor, floor_pct, report
from benchmarks.learning.suites import generated_case


def test_the_floor_is_the_true_models_error_against_the_measured_means() -> None:
    spec = appgen.make_app(7)
    points = [dict(zip(spec.attributes, a, strict=True)) for a in spec.assignments[:5]]
    exact = [(p, spec.time(p)) for p in points]
    assert floor_pct(spec, exact) == pytest.approx(0.0, abs=1e-9)
    slow = [(p, 1.25 * t) for p, t in exact]  # every measurement 25% slower than the truth
    assert floor_pct(spec, slow) == pytest.approx(20.0)


def test_a_campaigns_floor_follows_the_applications_noise(tmp_path: Path) -> None:
    case = generated_case("tuning", 3, tmp_path)
    spec = appgen.make_app(3)
    floor = campaign_floor(case, seed=1, judge=20, external=30)
    # each T carries log-normal noise of sigma spec.noise on its occupancies, averaged over
    # its repeats: the mean absolute error of the truth sits well under three sigmas
    assert 0.0 < floor < 300 * spec.noise
    assert campaign_floor(case, seed=1, judge=20, external=30) == floor  # the same split
    assert campaign_floor(case, seed=2, judge=20, external=30) != floor  # another test set


def test_bands_split_at_three_five_and_seven_percent() -> None:
    assert [band_of(f) for f in (0.0, 2.99, 3.0, 6.5, 7.0, 12.0)] == [
        "0-3%", "0-3%", "3-5%", "5-7%", ">= 7%", ">= 7%"]


def row(case: str, floor: float, reached: bool) -> dict:
    return {"case": case, "seed": 1, "floor": floor, "reached": reached,
            "reach_run": None if not reached else 9, "final": 12.0 if not reached else 3.0,
            "runs": 30, "stop_pct_time": 1.5}


def test_the_report_counts_by_band_and_lists_the_misses_highest_floor_first() -> None:
    rows = [row("a", 1.0, True), row("b", 1.5, False), row("c", 7.5, False),
            row("d", 8.0, True)]
    lines = report(rows, "recommended")
    assert f"median {np.median([1.0, 1.5, 7.5, 8.0]):.2f}%" in lines[0]
    assert any(line.startswith("0-3%") and line.split()[1:] == ["2", "1", "(50%)"]
               for line in lines)
    assert any(line.startswith(">= 7%") and line.split()[2:] == ["2", "1", "(50%)"]
               for line in lines)
    misses = [line for line in lines if line.startswith("  ")]
    assert [m.split()[0] for m in misses] == ["c", "b"]
    assert report([], "x") == ["no campaign of x on a generated application"]
