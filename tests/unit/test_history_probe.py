"""The history probe: averages over the last runs' models, and its budgeted reach and keep."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.learning.history_probe import HistoryScores, geometric_window, hits, score


def test_geometric_window_averages_the_last_k_rows_in_log_skipping_non_times() -> None:
    rows = [np.array([100.0, 1.0]), np.array([2.0, 4.0]), np.array([8.0, -1.0])]
    assert np.allclose(geometric_window(rows, 1), [8.0, np.nan], equal_nan=True)
    assert np.allclose(geometric_window(rows, 2), [4.0, 4.0])  # -1 is not a time: skipped
    assert np.allclose(geometric_window(rows, 3), [(100 * 2 * 8) ** (1 / 3), 2.0])
    assert np.isnan(geometric_window([np.array([np.nan])], 2)[0])


def _record(rows: list[list[float | None]], all_samples_s: float = 1000.0) -> dict:
    return {"case": "c", "seed": 1, "all_samples_s": all_samples_s, "rows": rows}


def test_hits_needs_the_reach_within_the_budget_and_every_later_run_kept() -> None:
    # (learning time so far, delivered, last 2); the budget is 2% of 1000 s = 20 s
    rec = _record([[5.0, 30.0, 30.0], [15.0, 9.0, 20.0], [25.0, 8.0, 9.0]])
    assert hits(rec, 1) == (True, 2.0)
    assert hits(rec, 2) == (False, 3.0)  # reached at 25 s: after the budget
    lost = _record([[5.0, 9.0, 9.0], [15.0, 11.0, 9.5]])
    assert hits(lost, 1)[0] is False and math.isinf(hits(lost, 1)[1])
    assert hits(lost, 2) == (True, 1.0)


def test_score_counts_campaigns_an_average_gains_and_loses() -> None:
    records = [_record([[5.0, 9.0, 9.0, 12.0], [15.0, 11.0, 9.5, 12.0]]),  # last 2 gains
               _record([[5.0, 9.0, 11.0, 9.0], [15.0, 9.0, 11.0, 9.0]])]  # last 2 loses
    lines = score(records)
    assert lines[0].startswith("2 campaigns")
    assert lines[2].split()[1] == "1"  # the delivered model keeps 10% in one campaign
    assert lines[3].endswith("gained 1, lost 1")
    assert lines[4].endswith("gained 0, lost 0")


class _Model:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return X[:, 0] * self.factor


def _told(x: float, spent: float) -> tuple[SimpleNamespace, SimpleNamespace]:
    return (SimpleNamespace(request=SimpleNamespace(assignment={"a": x})),
            SimpleNamespace(acquisition_s=spent))


def test_scores_average_each_run_s_model_with_the_previous_ones_over_rows_not_run() -> None:
    X = np.array([[1.0], [2.0], [4.0]])
    scores = HistoryScores(X, X[:, 0].copy(), ["a"])
    scores.iteration(*_told(1.0, 3.0), _Model(2.0))
    scores.iteration(*_told(2.0, 7.0), _Model(0.5))
    assert scores.rows[0] == pytest.approx([3.0, 100.0, 100.0, 100.0])
    spent, delivered, last2, last3 = scores.rows[1]
    assert (spent, delivered) == pytest.approx((7.0, 50.0))
    # sqrt(2 * 0.5) = 1: exact on the one row left
    assert last2 == pytest.approx(0.0, abs=1e-9) and last3 == pytest.approx(0.0, abs=1e-9)
    scores.iteration(*_told(4.0, 9.0), None)
    assert scores.rows[2] == [9.0, None, None, None] and scores.history == []


def test_a_probed_campaign_scores_its_runs_in_time_order_and_one_model_averages_to_itself(
        tmp_path: Path) -> None:
    from benchmarks.learning.history_probe import probe
    from benchmarks.learning.suites import load_suite

    case = load_suite("tuning-small", tmp_path, 1)[0]
    record = probe((case, 1))
    rows = record["rows"]
    assert len(rows) >= 3 and record["all_samples_s"] > 0
    spent = [r[0] for r in rows]
    assert spent == sorted(spent) and spent[-1] <= record["all_samples_s"]
    scored = [r for r in rows if r[1] is not None]
    assert scored and all(r[2] is not None and r[3] is not None for r in scored)
    # the first run's model has no predecessor: every window is the delivered model itself
    first = scored[0]
    assert first[1] == pytest.approx(first[2]) == pytest.approx(first[3])
