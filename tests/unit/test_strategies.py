"""Strategy registries (every design name resolves, unknown names list the valid ones, a newly
registered class is picked by its name) and a few strategies in isolation."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_planner import PAPER, SPACE, TableRunner

from nimo.campaign import Campaign
from nimo.config import _KIND as KIND_KEY
from nimo.config import Kind, option_names
from nimo.errors import ConfigError
from nimo.planner import PLANNERS, DesignSpec, make_planner, parse_design
from nimo.planner.design import STRATEGIES, StopRule
from nimo.planner.strategies.attribute_order import (
    ATTRIBUTE_ORDERS,
    StaticAttributeOrder,
    attribute_order_for,
)
from nimo.planner.strategies.chosen import strategies_for
from nimo.planner.strategies.error import ERROR_ESTIMATES, RandomTestSet
from nimo.planner.strategies.predictor_order import (
    PREDICTOR_ORDERS,
    StaticPredictorOrder,
    predictor_order_for,
)
from nimo.planner.strategies.reference import REFERENCES
from nimo.planner.strategies.sampling import LmaxI1, Sampling
from nimo.planner.strategies.samplings import SAMPLINGS
from nimo.planner.strategies.stop import (
    STOP_CONDITIONS,
    ErrorThreshold,
    Patience,
    Progress,
    RunBudget,
    StopCondition,
    StopRules,
)
from nimo.planner.strategies.traversal import TRAVERSALS, Dynamic, ImprovementBased, RoundRobin
from nimo.space import Attribute, ResourceSpace

DESIGNS = sorted((Path(__file__).resolve().parents[2] / "designs").glob("*.yaml"))
NAMED = {"reference": REFERENCES, "traversal": TRAVERSALS, "sampling": SAMPLINGS,
         "error": ERROR_ESTIMATES}


# -- registries ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.stem)
def test_every_name_in_the_shipped_designs_resolves_to_its_registered_class(path):
    raw = yaml.safe_load(path.read_text())
    spec = parse_design(raw)
    chosen = strategies_for(spec)
    for key, registry in NAMED.items():
        if key in raw:
            assert type(getattr(chosen, key)) is registry[raw[key]]
    for key, registry in (("predictor_order", PREDICTOR_ORDERS),
                          ("attribute_order", ATTRIBUTE_ORDERS)):
        if isinstance(raw.get(key), str):
            assert type(getattr(chosen, key)) is registry[raw[key]]
    for key in raw.get("stop", {}):
        assert key in STOP_CONDITIONS or key in (
            "min_samples", "agreement_pct", "honest", "confirm_runs", "confirm_pct")
    assert spec.strategy in PLANNERS


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.stem)
def test_a_design_round_trips_through_to_dict(path):
    spec = parse_design(yaml.safe_load(path.read_text()))
    assert parse_design(spec.to_dict()) == spec


def test_the_strategy_key_lists_exactly_the_planners():
    assert tuple(PLANNERS) == STRATEGIES


@pytest.mark.parametrize("key", sorted(NAMED))
def test_an_unknown_name_names_the_key_and_lists_the_valid_ones(key):
    with pytest.raises(ConfigError) as parsed:
        parse_design({key: "zigzag"})
    assert parsed.value.message == f"{key}: unknown value 'zigzag'"
    assert parsed.value.hint == "valid: " + ", ".join(NAMED[key])
    with pytest.raises(ConfigError) as built:  # a spec built without parse_design
        strategies_for(DesignSpec(**{key: "zigzag"}))
    assert str(built.value) == str(parsed.value)


def test_every_design_key_is_declared_once_with_a_checker():
    for cls in (DesignSpec, StopRule):
        assert option_names(cls) == tuple(f.name for f in fields(cls))
        for f in fields(cls):
            assert isinstance(f.metadata[KIND_KEY], Kind), f.name
    with pytest.raises(ConfigError, match="stop.paitence: unknown key .valid: .*patience"):
        parse_design({"stop": {"paitence": 3}})


class FirstFree(Sampling):
    """Test sampling: the first free candidate in candidate order."""

    def select(self, view, attribute):
        return next((c for c in view.space.candidates if c not in view.taken()), None)


def test_a_registered_sampling_is_picked_by_its_name(monkeypatch):
    monkeypatch.setitem(SAMPLINGS, "first_free", FirstFree)
    planner = make_planner(SPACE, {**PAPER, "sampling": "first_free",
                                   "stop": {"max_runs": 12}})
    runner = TableRunner(SPACE)
    Campaign(planner, runner).run()
    assert isinstance(planner.strategies.sampling, FirstFree)
    train = [a for purpose, a in runner.asked if purpose == "train"]
    before_training = {a for purpose, a in runner.asked if purpose != "train"}
    free = [c for c in SPACE.candidates if c not in before_training]
    assert train and train == free[:len(train)]


class SamplesCap(StopCondition):
    """Test stop condition: stop with 6 training samples."""

    @classmethod
    def from_rule(cls, rule):
        return cls()

    def reason(self, progress):
        return "six samples" if progress.samples >= 6 else None


def test_a_registered_stop_condition_stops_the_planner(monkeypatch):
    monkeypatch.setitem(STOP_CONDITIONS, "samples_cap", SamplesCap)
    planner = make_planner(SPACE, {**PAPER, "stop": {"error_pct": 0}})
    result = Campaign(planner, TableRunner(SPACE)).run()
    assert result.stopped_because == "six samples"
    assert planner.learner.n == 6


# -- strategies in isolation ------------------------------------------------------------
def test_round_robin_and_improvement_traversals():
    rr = RoundRobin()
    picks = []
    for _ in range(5):
        picks.append(rr.choose(["f_a", "f_n"], {}))
        rr.after_run(10.0, 9.0, 1)
    assert picks == ["f_a", "f_n", "f_a", "f_n", "f_a"]
    imp = ImprovementBased(2.0)
    imp.after_run(10.0, 5.0, 2)  # a 5-point gain: stay
    assert imp.choose(["f_a", "f_n"], {}) == "f_a"
    imp.after_run(10.0, 9.0, 1)  # small gain but one run on the attribute: stay
    assert imp.choose(["f_a", "f_n"], {}) == "f_a"
    imp.after_run(10.0, 9.0, 2)  # small gain after two runs: move on
    assert imp.choose(["f_a", "f_n"], {}) == "f_n"


def test_dynamic_traversal_takes_the_largest_error_and_breaks_ties_by_order():
    order = ["f_d", "f_a", "f_n"]
    assert Dynamic().choose(order, {"f_a": 3.0, "f_n": 7.0, "f_d": None}) == "f_n"
    assert Dynamic().choose(order, {"f_a": 5.0, "f_n": 5.0}) == "f_a"


def test_stop_conditions_by_stage():
    rules = StopRules(StopRule(error_pct=5, min_samples=4, max_runs=10, patience=2))
    assert [type(c) for c in rules.conditions] == [RunBudget, ErrorThreshold, Patience]
    early = Progress(runs=3, learning_s=0.0, internal_error=4.0, samples=3,
                     error_history=[9.0, 8.0, 7.0])
    assert rules.first("budget", early) is None
    assert rules.first("converged", early) is None  # below min_samples
    done = Progress(10, 0.0, 4.0, 4, [9.0, 6.0, 5.8, 5.9])
    assert rules.first("budget", done) == "run budget spent (10 runs >= max_runs 10)"
    assert rules.first("converged", done) == "internal error 4.00% <= 5% with 4 training samples"
    assert rules.first("plateau", done) == ("internal error plateaued at 5.80% (no 0.5-point "
                                            "gain in 2 runs)")
    assert Patience(2).reason(Progress(4, 0.0, 1.0, 4, [9.0, 8.0, 1.0])) is None


class View:
    """The parts of a PlanView that L_max-I_1 reads."""

    def __init__(self, space, reference, taken=()):
        self.space = space
        self.reference = reference
        self.visited = {n: set() for n in space.names}
        self.notes: list[str] = []
        self.next_run = 7
        self._taken = set(taken)

    def taken(self):
        return self._taken


def test_lmax_i1_walks_the_levels_in_bisection_order_around_the_reference():
    view = View(SPACE, SPACE.min_capacity())
    view.visited["cpu"].add(400.0)
    picks = [LmaxI1().select(view, "cpu") for _ in range(5)]
    assert [a[0] for a in picks[:4]] == [1200.0, 800.0, 600.0, 1000.0]
    assert all(a[1:] == SPACE.min_capacity()[1:] for a in picks[:4])
    assert picks[4] is None


def test_lmax_i1_snaps_to_a_free_candidate_and_notes_it():
    cpu = Attribute("cpu", (1.0, 2.0, 3.0))
    mem = Attribute("mem", (1.0, 2.0))
    space = ResourceSpace((cpu, mem), ((1.0, 1.0), (3.0, 2.0), (2.0, 1.0)))
    view = View(space, (1.0, 1.0))
    view.visited["cpu"].add(1.0)
    assert LmaxI1().select(view, "cpu") == (3.0, 2.0)
    assert view.notes == ["run 7: (3.0, 1.0) not available, snapped to (3.0, 2.0)"]


def test_random_test_set_needs_room_to_train():
    class Small:
        space = ResourceSpace((Attribute("cpu", (1.0, 2.0, 3.0)),))
        reference = (1.0,)
        rng = np.random.default_rng(0)

        def unmeasured(self, exclude=()):
            return [c for c in self.space.candidates if c not in exclude]

    with pytest.raises(ConfigError, match="test_size 2 leaves no assignment") as e:
        RandomTestSet(2).plan_test_set(Small())
    assert e.value.hint == "at most 1 here"
    chosen = RandomTestSet(1).plan_test_set(Small())
    assert len(chosen) == 1 and chosen[0] != (1.0,)


def test_static_orders_put_the_design_list_first():
    assert StaticPredictorOrder(["f_d", "f_a"]).initial(("f_a", "f_n", "f_d", "f_D"),
                                                        "occupancy") == ["f_d", "f_a", "f_n", "f_D"]
    assert type(predictor_order_for(("f_d",))) is StaticPredictorOrder
    order = attribute_order_for({"f_a": ("lat",)})
    assert isinstance(order, StaticAttributeOrder)
    assert order.initial(SPACE, ("f_a", "f_n"))["f_a"] == ["lat", "cpu", "mem"]
    with pytest.raises(ConfigError, match="attribute_order.f_a: unknown attribute 'gpu'"):
        attribute_order_for({"f_a": ("gpu",)}).initial(SPACE, ("f_a",))
