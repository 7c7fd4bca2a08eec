"""The blend's probation (``predictors.gp_probation``): where only the run count lets the
Gaussian process in, the delivered model blends it only while it predicted the last runs,
each before it ran, better than the model without it."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.planner.learner import Learner
from nimo.planner.prospective import prospective_error_pct
from nimo.predictors import PredictorOptions
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace
from tests.unit.test_gp_blend import CPU, MEM, TRAIN, grid, smooth_knee


def learner(min_share: float, probation: int, min_runs: int = 32) -> Learner:
    space = ResourceSpace((Attribute("mem", MEM), Attribute("cpu", CPU)))
    options = PredictorOptions(bounded=True, gp=True, gp_min_share=min_share,
                               gp_min_runs=min_runs, gp_probation=probation,
                               final_fit="numpy", transforms=("identity", "reciprocal"))
    fitted = Learner(space, "direct", (8.0, 0.5), options)
    fitted.active["f_T"] = ["mem", "cpu"]
    for row in grid()[TRAIN]:
        tell(fitted, row, note=False)
    fitted.refit()
    fitted.cv_errors()  # the folds choose the blend's weight
    return fitted


def tell(fitted: Learner, row: np.ndarray, note: bool = True) -> None:
    """One training run at ``row`` (times from smooth_knee), predicted before it is added."""
    sample = Sample(assignment={"mem": float(row[0]), "cpu": float(row[1])},
                    T=float(smooth_knee(row[None, :])[0]))
    if note:
        assert prospective_error_pct(fitted, sample) is not None
    fitted.add(sample)


def unseen_rows(count: int) -> np.ndarray:
    return np.delete(grid(), TRAIN, axis=0)[:count]


def test_a_blend_the_run_count_lets_in_waits_for_its_probation() -> None:
    # 32 runs of 64 candidates, a share of 0.6 (38 runs): the run count lets the blend in
    held = learner(min_share=0.6, probation=3)
    assert held.blend_weight == 0.0 and held.gp_process() is None and held.model().gp is None
    unheld = learner(min_share=0.6, probation=0)
    assert unheld.blend_weight > 0  # the folds choose it, as without a probation
    assert held.cv_errors()[0] != pytest.approx(unheld.cv_errors()[0])  # P's error reported
    for row in unseen_rows(3):
        tell(held, row)
        held.refit()
        held.cv_errors()
    # the process, which the form lacks, predicted the three runs better: it is blended in
    assert len(held.probation.errors) == 3
    unblended, with_blend = np.asarray(held.probation.errors).T
    assert with_blend.mean() < unblended.mean()
    assert held.blend_weight > 0 and held.model().gp is not None


def test_a_blend_that_predicted_worse_stays_out() -> None:
    held = learner(min_share=0.6, probation=3)
    held.probation.errors = [(2.0, 5.0)] * 3  # the blend was further off on the last three runs
    tell(held, unseen_rows(1)[0])
    held.probation.errors[-1] = (2.0, 5.0)
    held.refit()
    held.cv_errors()
    assert held.blend_weight == 0.0 and held.model().gp is None
    held.probation.errors += [(5.0, 2.0)] * 3
    tell(held, unseen_rows(2)[1])
    held.probation.errors[-1] = (5.0, 2.0)
    held.refit()
    held.cv_errors()
    assert held.blend_weight > 0


def test_no_probation_where_the_runs_cover_the_share() -> None:
    dense = learner(min_share=0.5, probation=3)
    assert not dense.probation.errors and dense.blend_weight > 0 and dense.model().gp is not None


@pytest.mark.parametrize(("options", "message"), [
    ({"gp_probation": -1}, "gp_probation must be >= 0"),
    ({"gp_probation": "eight"}, "gp_probation: bad number"),
    ({"gp_min_runs": 0, "gp_probation": 8}, "gp_probation needs predictors.gp_min_runs"),
])
def test_a_bad_probation_is_a_one_line_config_error(options, message) -> None:
    base = {"bounded": True, "gp": True, "gp_min_share": 0.05, "gp_min_runs": 30}
    with pytest.raises(ConfigError, match=message):
        PredictorOptions.from_dict({**base, **options})


def test_the_probation_is_echoed_only_when_set() -> None:
    base = {"bounded": True, "gp": True, "gp_min_share": 0.05, "gp_min_runs": 30}
    held = PredictorOptions.from_dict({**base, "gp_probation": 8})
    assert held.to_dict()["gp_probation"] == 8
    assert PredictorOptions.from_dict(held.to_dict()) == held
    assert "gp_probation" not in PredictorOptions.from_dict(base).to_dict()
