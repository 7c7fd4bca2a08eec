"""The blend-weight probe of benchmarks/learning/weight_probe.py (its pure parts)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.learning import weight_probe


def test_the_weight_at_a_gain_is_the_best_only_when_it_beats_weight_0_by_that_much() -> None:
    fold = {"0.0": 10.0, "0.25": 9.5, "0.5": 8.5, "0.75": 8.5, "1.0": None}
    assert weight_probe._weight_at_gain(fold, 1.0) == "0.5"  # ties: the smaller weight
    assert weight_probe._weight_at_gain(fold, 0.9) == "0.5"  # 8.5 < 9.0
    assert weight_probe._weight_at_gain(fold, 0.8) == "0.0"  # 8.5 is not below 8.0
    assert weight_probe._weight_at_gain({"0.0": None, "1.0": 1.0}, 1.0) == "0.0"


def test_distances_compare_a_run_to_its_neighbour_with_an_unmeasured_assignment() -> None:
    levels = [[0.0, 1.0, 2.0, 3.0, 4.0]]
    runs = np.array([[0.0], [4.0]])
    out = weight_probe._distances(levels, runs, np.array([[1.0], [2.0], [3.0]]))
    assert out["d_runs"] == pytest.approx(1.0)  # the two runs are the grid's span apart
    assert out["d_unseen"] == pytest.approx(0.25)  # 0.25, 0.5, 0.25 of the span: median


def test_the_score_reads_chosen_best_and_process_free_errors_per_design() -> None:
    def row(design: str, w: float, ext: list[float], fold: list[float]) -> dict:
        keys = ["0.0", "0.25", "0.5", "0.75", "1.0"]
        return {"design": design, "w": w, "ext": dict(zip(keys, ext, strict=True)),
                "fold": dict(zip(keys, fold, strict=True)), "d_runs": 2.0, "d_unseen": 1.0}
    rows = [row("a", 0.0, [20, 15, 12, 11, 10], [10, 9, 8.5, 8.4, 8.3]),
            row("a", 1.0, [10, 9, 8, 7, 6], [10, 9, 8, 7, 6]),
            row("b", 0.5, [5, 5, 5, 5, 5], [5, 5, 5, 5, 5]), {"design": "b", "w": 0.0}]
    text = weight_probe.score(rows)
    assert "a: 2 campaigns with a kernel; external MAPE median: no process 15.0, chosen " \
           "weight 13.0, best weight 8.0" in text
    assert "chosen below the best 50%, above 0%" in text
    assert "run-to-run / unmeasured-to-run distance: 2.00" in text
    assert "external at GAIN 0.8: 13.00, 0.9: 8.00, 1.0: 8.00" in text
    assert "b: 1 campaigns with a kernel" in text


def test_the_distance_judge_reads_the_error_at_the_distances_the_model_is_asked() -> None:
    """Runs on a line 0, 2, 4, .. 18 (nearest other run: 2 steps, the ends too); candidates
    between them are 1 step from a run. Errors that grow with the distance are judged
    lower than their plain mean; errors that do not grow are judged by their mean."""
    levels = [list(range(19))]
    X = np.arange(0, 19, 2, dtype=float).reshape(-1, 1)
    unmeasured = np.arange(1, 19, 2, dtype=float).reshape(-1, 1)
    judge = weight_probe.distance_judge(levels, X, unmeasured)
    T = np.full(10, 10.0)
    uneven = T * np.r_[1.3, np.full(8, 1.1), 1.3]  # every run 2 steps from the next
    assert judge(T, uneven) == pytest.approx(np.mean(np.abs(uneven - T) / T) * 100)
    X2 = np.array([[0.0], [1.0], [2.0], [3.0], [8.0], [18.0]])
    judge2 = weight_probe.distance_judge(levels, X2, np.array([[4.0], [5.0], [9.0], [10.0]]))
    T2 = np.full(6, 10.0)
    far_worse = T2 * np.array([1.05, 1.05, 1.05, 1.05, 1.4, 1.8])  # errors grow with distance
    plain = float(np.mean(np.abs(far_worse - T2) / T2) * 100)
    assert judge2(T2, far_worse) < plain
    flat = T2 * 1.2
    assert judge2(T2, flat) == pytest.approx(20.0)
    assert judge2(T2, np.full(6, np.nan)) is None


def test_matching_weighs_each_run_by_the_unmeasured_assignments_at_its_distance() -> None:
    apes = np.array([10.0, 20.0, 40.0])
    d_runs = np.array([0.1, 0.2, 0.4])
    assert weight_probe._matched(apes, d_runs, np.array([0.1, 0.11, 0.19])) == pytest.approx(
        (10 + 10 + 20) / 3)
    assert weight_probe._matched(apes, d_runs, np.array([0.5])) == pytest.approx(40.0)
