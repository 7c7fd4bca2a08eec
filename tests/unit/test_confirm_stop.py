"""``stop.confirm_runs``: the error target counts only once runs predicted before they ran agree."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.planner import make_planner
from nimo.planner.design import StopRule, parse_design
from nimo.planner.strategies.stop import ErrorThreshold, Progress, StopRules
from nimo.records import RunOutcome, RunStatus, Sample
from nimo.space import Attribute, ResourceSpace


def progress(internal: float, prospective: list[float], samples: int = 20) -> Progress:
    return Progress(samples, 0.0, internal, samples, [internal], prospective)


def test_without_confirm_runs_the_internal_error_alone_decides() -> None:
    rule = ErrorThreshold(5.0, 12)
    assert rule.reason(progress(4.0, [])) == "internal error 4.00% <= 5% with 20 training samples"


def test_confirm_runs_waits_for_enough_runs_and_their_mean_error() -> None:
    rule = ErrorThreshold(5.0, 12, confirm_runs=3)
    assert rule.reason(progress(4.0, [2.0, 2.0])) is None  # only two runs predicted yet
    assert rule.reason(progress(4.0, [1.0, 2.0, 30.0, 1.0])) is None  # mean 11 > 5
    reason = rule.reason(progress(4.0, [40.0, 3.0, 4.0, 5.0]))  # only the last 3 count
    assert reason == ("internal error 4.00% <= 5% with 20 training samples; the last 3 runs, "
                      "predicted before they ran, were 4.00% off on average")
    assert rule.reason(progress(6.0, [1.0, 1.0, 1.0])) is None  # the internal error still decides


def test_confirm_pct_sets_its_own_bound() -> None:
    rule = ErrorThreshold(5.0, 12, confirm_runs=2, confirm_pct=10.0)
    assert rule.reason(progress(4.0, [9.0, 9.5])) is not None
    assert rule.reason(progress(4.0, [9.0, 11.5])) is None


def test_stop_rules_build_the_confirmation_from_the_design() -> None:
    rules = StopRules(StopRule(error_pct=5, min_samples=2, confirm_runs=2))
    assert rules.first("converged", progress(3.0, [8.0, 8.0])) is None
    assert rules.first("converged", progress(3.0, [4.0, 5.0])) is not None


def test_the_keys_are_echoed_only_when_set_and_checked() -> None:
    assert "confirm_runs" not in parse_design({}).to_dict()["stop"]
    echoed = parse_design({"stop": {"confirm_runs": 4}}).to_dict()["stop"]
    assert echoed["confirm_runs"] == 4 and "confirm_pct" not in echoed
    with pytest.raises(ConfigError, match="confirm_runs"):
        parse_design({"stop": {"confirm_runs": 0}}, "d.yaml")


SPACE = ResourceSpace((Attribute("cpu", tuple(float(v) for v in range(1, 9))),
                       Attribute("lat", tuple(float(v) for v in range(0, 12, 2)))))


def drive(design: dict, runs: int) -> object:
    planner = make_planner(SPACE, design, seed=3, kind="direct")
    for _ in range(runs):
        batch = planner.ask()
        if not batch:
            break
        for req in batch:
            a = req.assignment
            T = 100.0 / a["cpu"] + 3.0 * a["lat"] + 10.0
            planner.tell(RunOutcome(req, RunStatus.DONE, Sample(dict(a), T=T)))
    return planner


def test_the_planner_records_each_training_runs_error_before_it_learns_it() -> None:
    design = {"sampling": "support", "reference": "center", "error": "cv",
              "predictors": {"mode": "auto", "bounded": True},
              "stop": {"error_pct": 1, "min_samples": 4, "confirm_runs": 3, "max_runs": 15}}
    planner = drive(design, 15)
    errors = planner.prospective_errors  # type: ignore[attr-defined]
    # every training run after the reference was predicted first (the reference was not)
    assert len(errors) == planner.learner.n - 1  # type: ignore[attr-defined]
    assert all(0.0 <= e <= 100.0 for e in errors)
    assert np.mean(errors[:3]) > 10.0 > np.mean(errors[-3:])  # the fit learns to guess


def test_the_targets_key_chooses_what_the_learner_fits() -> None:
    """``targets: direct`` learns T alone even from occupancy data; ``occupancy`` refuses
    T-only data in one line naming the design; ``auto`` follows the data."""
    space = ResourceSpace([Attribute("cpu", [1.0, 2.0, 4.0])])
    base = {"name": "t", "strategy": "nimo", "sampling": "support+edges"}
    planner = make_planner(space, {**base, "targets": "direct"}, kind="occupancy")
    assert planner.kind == planner.learner.kind == "direct"
    assert make_planner(space, {**base, "targets": "auto"}, kind="occupancy").kind == "occupancy"
    assert make_planner(space, {**base, "targets": "occupancy"}, kind="occupancy").kind == (
        "occupancy")
    with pytest.raises(ConfigError, match=r"^design t: targets: occupancy needs data with"):
        make_planner(space, {**base, "targets": "occupancy"}, kind="direct")
