"""Common levels between measured ones that no training run held: recorded by the planner
(``training.unmeasured_levels``) and named in the campaign's warnings."""

from __future__ import annotations

import numpy as np
from test_level_sampling import _lopsided
from test_planner import SPACE, campaign
from test_support_sampling import RECOMMENDED_LIKE

from nimo.campaign.metrics import unmeasured_levels
from nimo.planner.strategies.levels import unmeasured_interior_levels
from nimo.space import Attribute, ResourceSpace
from workbench.exitstatus import model_warnings


def test_only_common_levels_inside_the_measured_range_are_recorded() -> None:
    space = _lopsided()  # cpu 1 held by 3 of 10 candidates, cpu 2 and 3 by 2, 4-6 by 1
    rows = np.array([(1.0, 64.0), (6.0, 512.0)])
    got = unmeasured_interior_levels(space, rows)
    assert got == {"cpu": [[2.0, 0.2], [3.0, 0.2], [4.0, 0.1], [5.0, 0.1]],
                   "mem": [[128.0, 0.3]]}
    assert unmeasured_interior_levels(space, rows, share=0.15) == {
        "cpu": [[2.0, 0.2], [3.0, 0.2]], "mem": [[128.0, 0.3]]}
    # beyond the measured range is extrapolation (warned of elsewhere), not recorded here
    narrow = np.array([(2.0, 128.0), (3.0, 512.0)])
    assert unmeasured_interior_levels(space, narrow) == {}
    assert unmeasured_interior_levels(space, np.empty((0, 2))) == {}


def test_a_categorical_knob_is_left_to_the_unseen_categories_warning() -> None:
    kind = Attribute("kind", (1.0, 2.0, 3.0), categories=("a", "b", "c"))
    cpu = Attribute("cpu", (1.0, 2.0, 3.0))
    space = ResourceSpace((kind, cpu))
    got = unmeasured_interior_levels(space, np.array([(1.0, 1.0), (3.0, 3.0)]))
    assert got == {"cpu": [[2.0, round(1 / 3, 3)]]}


def test_the_record_is_read_and_warned_of_garbled_parts_left_out() -> None:
    model = {"attributes": [{"name": "input_mb", "levels": [435, 9490, 14400]},
                            {"name": "mem", "levels": [1, 2]}],
             "training": {"unmeasured_levels": {
                 "input_mb": [[9490.0, 0.26], [100.0, 1.5], ["x", 0.2], [1.0]],
                 "mem": "lots", "gone": [[5.0, 0.5]]}}}
    found = unmeasured_levels(model)
    assert [(u.knob, u.levels) for u in found] == [("input_mb", ((9490.0, 0.26),)),
                                                    ("gone", ((5.0, 0.5),))]
    warnings = model_warnings(model, [{"assignment": {"input_mb": 435.0, "mem": 1.0}},
                                      {"assignment": {"input_mb": 14400.0, "mem": 2.0}}])
    said = [w for w in warnings if "never measured" in w]
    assert said == ["knob input_mb: 9490 (26% of the candidates) never measured; predictions "
                    "there interpolate between measured levels, and the internal error does "
                    "not cover them"]  # a knob the model does not have is not warned of
    for record in ({"unmeasured_levels": None}, {"unmeasured_levels": [[1.0, 0.5]]}, {}):
        assert unmeasured_levels({"training": record}) == []


def test_a_campaign_records_the_levels_its_runs_skipped() -> None:
    planner, _, result = campaign({**RECOMMENDED_LIKE, "stop": {"error_pct": 0, "max_runs": 4}})
    X = planner.learner.X
    expected = unmeasured_interior_levels(SPACE, X)
    assert expected  # four runs over this grid leave levels between measured ones
    for name, pairs in expected.items():
        j = SPACE.names.index(name)
        assert all(X[:, j].min() < v < X[:, j].max() and v not in X[:, j] for v, _ in pairs)
    assert result.model is not None
    assert result.model.training["unmeasured_levels"] == expected
