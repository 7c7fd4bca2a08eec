"""The offline stop-rule study of benchmarks/learning/stop_study.py: pure scoring logic."""

from __future__ import annotations

import pytest

from benchmarks.learning import stop_study


def trajectory(cv: list[float | None], prospective: list[float], external: list[float],
               run_s: float = 1.0, all_samples_s: float = 1000.0) -> dict:
    its = []
    for i, (c, e) in enumerate(zip(cv, external, strict=True)):
        its.append({"run": i + 1, "purpose": "train", "status": "done",
                    "acquisition_s": run_s * (i + 1), "internal_error_pct": c,
                    "external_mape_pct": e, "prospective_n": i + 1,
                    "prospective": prospective[i], "samples": i + 1})
    return {"case": "c", "seed": 1, "exit": 0, "all_samples_s": all_samples_s,
            "iterations": its}


def test_the_confirmation_waits_for_the_prospective_errors() -> None:
    n = 40
    cv = [None] * 3 + [4.0] * (n - 3)  # below the 5% target from run 4 on
    prospective = [20.0] * 20 + [2.0] * (n - 20)  # runs 21.. are predicted within 2%
    external = [12.0] * 14 + [3.0] * (n - 14)
    t = trajectory(cv, prospective, external)
    five = stop_study.score_campaign(t, "cv", confirm=5)
    ten = stop_study.score_campaign(t, "cv", confirm=10)
    # 5: runs 21-25 all within 2%; 10: at run 29 the last ten average (20 + 9 x 2) / 10 = 3.8
    assert five["stop_run"] == 25 and ten["stop_run"] == 29
    assert five["ratio"] == pytest.approx(3.0 / 4.0)
    assert five["reached"] and ten["reached"]  # 10% from run 15, 15 s <= 2% of 1000 s


def test_reach_and_keep_fails_when_the_error_rises_again_or_comes_late() -> None:
    n = 40
    cv = [None] * 3 + [4.0] * (n - 3)
    prospective = [2.0] * n
    external = [3.0] * 5 + [15.0] + [3.0] * (n - 6)  # kept only from run 7
    late = trajectory(cv, prospective, external, run_s=10.0)  # run 7 at 70 s > 2% of 1000 s
    scored = stop_study.score_campaign(late, "cv", confirm=5)
    assert scored["stop_run"] == 12 and scored["reached"] is False
    early = trajectory(cv, prospective, external, run_s=1.0)  # run 7 at 7 s
    assert stop_study.score_campaign(early, "cv", confirm=5)["reached"] is True


def test_the_geometric_estimate_needs_both_figures() -> None:
    estimate = stop_study.ESTIMATES["geometric(cv, prospective-5)"]
    assert estimate(None, [1.0] * 5) is None
    assert estimate(4.0, [1.0] * 4) is None
    assert estimate(4.0, [1.0] * 5) == pytest.approx(2.0)


def test_a_longer_patience_waits_past_a_plateau_that_later_breaks() -> None:
    n = 70
    cv = [None] * 3 + [20.0] * 37 + [4.0] * (n - 40)  # stuck at 20% until run 40
    prospective = [20.0] * 40 + [2.0] * (n - 40)
    external = [25.0] * 40 + [6.0] * (n - 40)  # the model gets it right at run 41
    t = trajectory(cv, prospective, external, run_s=0.1)  # 41 runs = 4.1 s < 2% of 1000 s
    short = stop_study.patience_scores(t, 30)
    long = stop_study.patience_scores(t, 60)
    # 30: the median of the last 3 errors no better than that of the 3 before the last 30
    # (33 errors: run 36); 60: the target stops it once the last ten runs were predicted
    # within 5% on average (runs 40-49: (20 + 9 x 2) / 10)
    assert short["stop_run"] == 36 and not short["reached"] and short["final"] == 25.0
    assert long["stop_run"] == 49 and long["reached"] and long["final"] == 6.0
    assert not long["capped"] and long["case"] == "c s1"


def test_reachable_is_whether_any_stop_reaches_and_keeps() -> None:
    n = 30
    cv = [None] * 3 + [4.0] * (n - 3)
    prospective = [2.0] * n
    bounce = trajectory(cv, prospective, [15.0] * 5 + [8.0] * 5 + [15.0] * (n - 10))
    assert stop_study.reachable(bounce)  # stopping at runs 6-10 keeps it
    assert not stop_study.patience_scores(bounce, 30)["reached"]  # the target stops at 12
    late = trajectory(cv, prospective, [15.0] * 25 + [8.0] * 5, run_s=10.0)
    assert not stop_study.reachable(late)  # run 26 at 260 s > 2% of 1000 s
