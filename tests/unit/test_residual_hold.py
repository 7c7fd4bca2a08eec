"""``predictors.residual_hold``: a residual correction in use stays on while its fold error
is under the hold's share of the uncorrected one; it still comes on only under 0.8."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.planner.crossval import Folds
from nimo.planner.learner import RESIDUAL_GAIN, Learner
from nimo.predictors import PredictorOptions
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace

MEM = tuple(float(v) for v in range(1, 17))
CPU = (0.25, 0.5, 0.75, 1.0)


def cliff_learner(hold: float) -> Learner:
    """A learner with the correction on a run time that triples below 6 units of memory."""
    space = ResourceSpace((Attribute("mem", MEM), Attribute("cpu", CPU)))
    options = PredictorOptions(bounded=True, residual=True, residual_hold=hold,
                               final_fit="numpy", transforms=("identity", "reciprocal", "log"))
    learner = Learner(space, "direct", (8.0, 0.5), options)
    learner.active["f_T"] = ["mem", "cpu"]
    rows = np.random.default_rng(1).permutation(len(MEM) * len(CPU))[:32]
    for i in rows:
        m, c = MEM[i // len(CPU)], CPU[i % len(CPU)]
        learner.add(Sample(assignment={"mem": m, "cpu": c}, T=100.0 / c * (3 if m < 6 else 1)))
    learner.refit()
    return learner


def folds_at_ratio(learner: Learner, ratio: float) -> Folds:
    """Folds whose out-of-fold T is 20% high and the corrected one ``20 x ratio``% high."""
    T = learner.T()
    plain = T * 1.2
    factor = np.full(T.size, (1 + 0.2 * ratio) / 1.2)
    return Folds((20.0, {}), plain, factor, np.tile(plain, (5, 1)), np.ones((5, T.size)))


@pytest.mark.parametrize(("hold", "was_on", "ratio", "on"), [
    (0.9, True, 0.85, True),    # in use, under the hold: stays on
    (0.9, False, 0.85, False),  # not in use: comes on only under 0.8
    (0.0, True, 0.85, False),   # no hold: off at 0.8, as before
    (0.9, True, 0.95, False),   # over the hold: off
    (0.0, False, 0.75, True),   # under 0.8: on either way
])
def test_the_correction_in_use_stays_on_under_the_hold(monkeypatch, hold, was_on, ratio,
                                                       on) -> None:
    learner = cliff_learner(hold)
    assert learner._residual_hyper() is not None
    monkeypatch.setattr(learner, "folds", lambda *a, **k: folds_at_ratio(learner, ratio))
    learner.use_residual = was_on
    learner.cv_errors()
    assert learner.use_residual is on


def test_the_hold_is_a_share_and_needs_the_correction() -> None:
    options = PredictorOptions.from_dict({"bounded": True, "residual": True,
                                          "residual_hold": 0.9})
    assert options.residual_hold == 0.9 and options.to_dict()["residual_hold"] == 0.9
    assert "residual_hold" not in PredictorOptions(bounded=True, residual=True).to_dict()
    with pytest.raises(ConfigError, match=r"residual_hold must lie in \[0, 1\]"):
        PredictorOptions.from_dict({"bounded": True, "residual": True, "residual_hold": 1.5})
    with pytest.raises(ConfigError, match="residual_hold needs predictors.residual"):
        PredictorOptions.from_dict({"bounded": True, "residual_hold": 0.9})
    with pytest.raises(ConfigError, match="bad number"):
        PredictorOptions.from_dict({"bounded": True, "residual": True, "residual_hold": "x"})
    assert RESIDUAL_GAIN < 0.9
