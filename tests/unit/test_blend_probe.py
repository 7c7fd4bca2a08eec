"""The GP-blend probe of benchmarks/learning/blend_probe.py (its pure parts)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.learning import blend_probe
from nimo.planner.crossval import fold_ids


def test_attributes_scale_by_logarithm_when_positive_else_linearly() -> None:
    scale = blend_probe._log_scaler([[1.0, 10.0, 100.0], [0.0, 5.0, 10.0]])
    out = scale(np.array([[1.0, 0.0], [10.0, 5.0], [100.0, 10.0], [1000.0, 2.5]]))
    assert out[:, 0] == pytest.approx([0.0, 0.5, 1.0, 1.5])  # beyond the grid: on in log
    assert out[:, 1] == pytest.approx([0.0, 0.5, 1.0, 0.25])


def _grab(T_at: np.ndarray, P_oof: np.ndarray) -> None:
    X = np.linspace(1.0, 64.0, T_at.size)[:, None]
    blend_probe.GRAB.clear()
    blend_probe.GRAB.update(X=X, T=T_at, oof=P_oof, ids=fold_ids(T_at.size, 5, T_at.size))


def test_the_folds_choose_the_gp_where_the_delivered_model_is_wrong_and_not_where_right() -> None:
    grid = np.linspace(1.0, 64.0, 40)[:, None]
    truth = 10.0 + 100.0 / grid[:, 0]
    fit = blend_probe._sklearn_gp("m52", blend_probe._log_scaler([list(grid[:, 0])]))
    train = truth[::3]
    # a delivered model that is a constant 30% off: the folds take the GP and it is better
    _grab(train, np.full(train.size, 1.3 * np.exp(np.log(train).mean())))
    wrong = blend_probe._variant_row(fit, grid, truth, np.full(truth.size, 30.0))
    assert wrong["w"] > 0 and wrong["blend"] < blend_probe._mape(np.full(truth.size, 30.0), truth)
    # a delivered model that is exact: the folds keep it alone
    _grab(train, train.copy())
    right = blend_probe._variant_row(fit, grid, truth, truth.copy())
    assert right["w"] == 0.0 and right["blend"] == pytest.approx(0.0, abs=1e-9)
    assert right["fold"] == pytest.approx(0.0, abs=1e-9)


def test_the_score_reads_medians_per_mark() -> None:
    def row(mark: float, P: float, blend: float) -> dict:
        v = {"G": blend, "blend": blend, "w": 0.5, "fold": blend}
        return {"mark": mark, "P": P, **{n: v for n in
                                         ("m52-log", "se-log", "m52-rank", "nimo-rank")}}
    text = blend_probe.score([row(0.2, 20.0, 10.0), row(0.2, 4.0, 6.0), row(0.2, 12.0, 8.0),
                              row(0.3, 5.0, 5.0)])
    assert "mark 0.2: 3 campaigns; delivered median 12.0%, > 10% in 2" in text
    assert "m52-log   G   8.0  blend   8.0 (> 10%: 0; better / worse than delivered by 0.5:" \
           " 2 / 1; external / fold error 1.00)" in text
    assert "mark 0.3: 1 campaigns" in text
