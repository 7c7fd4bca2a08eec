"""The holdout's systematic shift (``nimo.campaign.metrics.holdout_shift``) and the drift
warning the summary prints from it (``workbench.exitstatus.drift_warning``)."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.campaign.metrics import holdout_shift
from workbench.exitstatus import drift_confirmed, drift_warning, verdict


class Doubling:
    """A model predicting T = 2 x: enough for the figures (names, predict_many)."""

    names = ("x",)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return 2.0 * np.asarray(X, float)[:, 0]


def cases(ratios: list[float]) -> list[tuple[dict[str, float], float]]:
    return [({"x": float(i + 1)}, 2.0 * (i + 1) * r) for i, r in enumerate(ratios)]


def test_runs_uniformly_faster_give_a_negative_shift_and_the_mape_without_it() -> None:
    got = holdout_shift(Doubling(), cases([0.8, 0.8, 0.8, 0.8, 0.8]))
    assert got["holdout_shift_pct"] == pytest.approx(-20.0)
    assert got["holdout_shift_share"] == pytest.approx(1.0)
    assert got["holdout_mape_unshifted_pct"] == pytest.approx(0.0, abs=1e-9)


def test_errors_on_both_sides_give_a_small_shift_and_a_split_share() -> None:
    got = holdout_shift(Doubling(), cases([0.8, 1.25, 0.9, 1.1, 1.0 / 1.05, 1.05]))
    assert abs(got["holdout_shift_pct"]) < 5.0
    assert got["holdout_shift_share"] == pytest.approx(0.5)
    assert got["holdout_mape_unshifted_pct"] > 5.0


def test_no_case_or_no_model_gives_no_shift() -> None:
    assert holdout_shift(None, cases([1.0])) == dict.fromkeys(
        ("holdout_shift_pct", "holdout_shift_share", "holdout_mape_unshifted_pct"))
    assert holdout_shift(Doubling(), [])["holdout_shift_pct"] is None


def final(shift: float, share: float, runs: int = 10, failed: int = 0) -> dict[str, float]:
    return {"holdout_shift_pct": shift, "holdout_shift_share": share, "holdout_runs": runs,
            "holdout_failed": failed, "holdout_mape_unshifted_pct": 4.2}


def test_a_uniform_shift_of_a_tenth_or_more_is_a_drift_warning() -> None:
    (line,) = drift_warning(final(-18.6, 1.0))
    assert "took 19% less time than predicted" in line and "100% of them" in line
    assert "without that shift 4.2%" in line and "drift" in line
    assert "longer" in drift_warning(final(12.0, 0.8))[0]


@pytest.mark.parametrize("shift, share, runs, failed", [
    (-9.0, 1.0, 10, 0),   # a small shift
    (-30.0, 0.7, 10, 0),  # runs off on both sides
    (-30.0, 1.0, 4, 0),   # too few runs
    (-30.0, 1.0, 6, 2),   # too few runs measured
])
def test_no_drift_warning_below_the_thresholds(shift: float, share: float, runs: int,
                                               failed: int) -> None:
    assert drift_warning(final(shift, share, runs, failed)) == ()


def test_the_verdict_carries_the_drift_warning() -> None:
    doc = {"name": "c", "stopped_because": "internal error 4.0% <= target 5%",
           "iterations": [], "model": None, "final": final(-25.0, 0.9)}
    assert any("drift" in w for w in verdict(doc).warnings)


@pytest.mark.parametrize("recheck, confirmed", [
    (-15.0, True),   # the reference, re-run last, sped up like the holdout runs
    (-8.0, False),   # less than half the shift
    (4.0, False),    # the other way
])
def test_the_recheck_confirms_a_shift_only_when_it_moved_the_same_way(
        recheck: float, confirmed: bool) -> None:
    doc = {**final(-18.0, 1.0), "recheck_drift_pct": recheck}
    assert drift_confirmed(doc) is confirmed
    (line,) = drift_warning(doc)
    assert "re-run last, took" in line
    assert ("the model itself is off" in line) is not confirmed


def test_a_recheck_alone_warns_from_a_fifth_and_confirms_nothing_without_a_shift() -> None:
    calm = final(-2.0, 0.5)
    assert drift_warning({**calm, "recheck_drift_pct": -12.0}) == ()
    (line,) = drift_warning({**calm, "recheck_drift_pct": 25.0})
    assert "took 25% longer than while learning" in line and "drift" in line
    assert not drift_confirmed({**calm, "recheck_drift_pct": 25.0})
