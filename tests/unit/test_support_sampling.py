"""Support-point sampling (the recommended design's sampling): picks spread out AND
distributed like the candidates, measured by the energy distance to the candidate set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from scipy.spatial.distance import cdist
from test_planner import SPACE, campaign

from nimo.planner.strategies.scoring import rank_scale
from nimo.planner.strategies.support import EnergyCriterion, cost_aware_pick
from nimo.space import Attribute, ResourceSpace

RECOMMENDED_LIKE = {"reference": "center", "predictor_order": ["f_D", "f_a", "f_n", "f_d"],
                    "attribute_order": {}, "sampling": "support", "error": "cv",
                    "stop": {"error_pct": 0, "min_samples": 40, "max_runs": 25},
                    "predictors": {"mode": "auto", "bounded": True}}


def _energy(space: ResourceSpace, picks: list[tuple[float, ...]]) -> float:
    Z = rank_scale(space, np.asarray(space.candidates, float))
    S = rank_scale(space, np.asarray(picks, float))
    return float(2 * cdist(S, Z).mean() - cdist(S, S).mean() - cdist(Z, Z).mean())


def _greedy(space: ResourceSpace, n: int) -> list[tuple[float, ...]]:
    crit = EnergyCriterion(space)
    picks: list[tuple[float, ...]] = []
    for _ in range(n):
        pool = [c for c in space.candidates if c not in set(picks)]
        picks.append(pool[int(np.argmin(crit.of(pool)))])
        crit.update(picks)
    return picks


def _grid(k: int, levels: int) -> ResourceSpace:
    attrs = [Attribute(f"x{j}", tuple(float(v) for v in range(1, levels + 1)))
             for j in range(k)]
    return ResourceSpace(attrs)


def _two_seen() -> tuple[ResourceSpace, EnergyCriterion, list, list]:
    """A 6 x 6 grid, its criterion after two measured runs, and the rest of the grid."""
    space = _grid(2, 6)
    crit = EnergyCriterion(space)
    seen = [space.candidates[3], space.candidates[20]]
    crit.update(seen)
    return space, crit, seen, [c for c in space.candidates if c not in seen]


def test_criterion_matches_the_energy_distance_it_stands_for():
    space, crit, seen, pool = _two_seen()
    # the criterion orders candidates exactly as the energy distance of seen + candidate
    direct = np.array([_energy(space, [*seen, c]) for c in pool])
    assert np.argsort(crit.of(pool)).tolist()[:5] == np.argsort(direct).tolist()[:5]


def test_greedy_support_points_beat_random_picks_of_the_same_size():
    space = _grid(3, 8)
    rng = np.random.default_rng(0)
    for n in (6, 12, 24):
        support = _energy(space, _greedy(space, n))
        randoms = [_energy(space, [space.candidates[int(i)] for i in
                                   rng.choice(len(space.candidates), n, replace=False)])
                   for _ in range(30)]
        assert support < np.percentile(randoms, 10), (n, support, np.median(randoms))


def test_support_points_avoid_piling_up_in_corners_unlike_maximin():
    space = _grid(2, 11)
    picks = np.asarray(_greedy(space, 12))
    edge = ((picks == 1) | (picks == 11)).any(axis=1).mean()
    assert edge < 0.6  # maximin's first dozen picks on this grid are mostly on its edges


def test_cost_aware_pick_prefers_a_cheaper_run_only_among_near_equals():
    crit = np.array([0.0, 0.001, 5.0, 10.0])
    cheap_second = np.array([10.0, 1.0, 1.0, 1.0])
    assert cost_aware_pick(crit, cheap_second, 0.5) == 1
    assert cost_aware_pick(crit, cheap_second, 0.0) == 0
    far_cheaper = np.array([10.0, 10.0, 0.001, 10.0])
    assert cost_aware_pick(crit, far_cheaper, 0.5) == 0  # 10,000x cheaper, but far worse


def test_a_support_campaign_learns_the_synthetic_truth_and_never_repeats_a_pick():
    _, runner, result = campaign(RECOMMENDED_LIKE, seed=3)
    picks = [a for _, a in runner.asked]
    assert len(picks) == len(set(picks)) == 25
    assert result.external_mape_pct is not None and result.external_mape_pct < 5


def test_support_cost1_differs_from_recommended_only_by_a_stronger_cost_preference():
    designs = Path(__file__).resolve().parents[2] / "designs"
    rec = yaml.safe_load((designs / "recommended.yaml").read_text())
    cost1 = yaml.safe_load((designs / "support-cost1.yaml").read_text())
    assert cost1["cost_exponent"] == 1 and cost1["cost_exponent"] > rec["cost_exponent"]
    same = ("name", "description", "cost_exponent")
    # recommended later took predictors.physical (the two-point prior), stop.confirm_runs and
    # predictors.residual, .sticky (.sticky_share), .gp (.gp_min_share, .gp_min_runs,
    # .gp_probation) and .relative_noise, and error: cv_form (then cv_spread, then
    # cv_spread_checked); support-cost1 was measured without them and keeps its own
    later = ("physical", "physical_ties", "residual", "sticky", "sticky_share", "gp",
             "gp_min_share", "gp_min_runs", "gp_probation", "relative_noise")
    rec["predictors"] = {k: v for k, v in rec["predictors"].items() if k not in later}
    rec["stop"] = {k: v for k, v in rec["stop"].items() if k != "confirm_runs"}
    assert (rec["error"], cost1["error"]) == ("cv_spread_checked", "cv")
    rec["error"] = "cv"
    assert rec["sampling"] == "support+edges+variance" and cost1["sampling"] == "support"
    rec["sampling"] = "support"  # later the edge runs and the variance picks
    assert {k: v for k, v in cost1.items() if k not in same} == {
        k: v for k, v in rec.items() if k not in same}


def test_without_a_cost_preference_every_pick_after_the_reference_is_the_best_support_point():
    design = {**RECOMMENDED_LIKE, "cost_exponent": 0, "stop": {"error_pct": 0, "max_runs": 12}}
    _, runner, _ = campaign(design, seed=3)
    picks = [a for _, a in runner.asked]
    space = SPACE
    crit = EnergyCriterion(space)
    crit.update(picks[:1])
    for i, a in enumerate(picks[1:], 1):
        pool = [c for c in space.candidates if c not in set(picks[:i])]
        assert a == pool[int(np.argmin(crit.of(pool)))], i
        crit.update(picks[: i + 1])


def _rare_edge_space() -> ResourceSpace:
    """SPACE plus a cpu level far above the others, held by only 3 of 78 candidates."""
    cpu = Attribute("cpu", (*SPACE.attributes[0].levels, 4000.0))
    rare = [(4000.0, 256.0, lat) for lat in (0.0, 10.0, 20.0)]
    return ResourceSpace((cpu, *SPACE.attributes[1:]), (*SPACE.candidates, *rare))


def test_support_with_edges_measures_every_attributes_extreme_levels_after_the_start():
    space = _rare_edge_space()
    design = {**RECOMMENDED_LIKE, "stop": {"error_pct": 0, "max_runs": 14}}
    plain = [a for _, a in campaign(design, seed=3, space=space)[1].asked]
    edges = [a for _, a in campaign({**design, "sampling": "support+edges"}, seed=3,
                                    space=space)[1].asked]
    assert all(a[0] != 4000.0 for a in plain)  # support points stay inside the cloud
    start = 2 * len(space.names) + 2
    assert plain[:start] == edges[:start]  # the start is the same support points
    for i, attribute in enumerate(space.attributes):
        assert {min(attribute.levels), max(attribute.levels)} <= {a[i] for a in edges}
    assert len(edges) == len(set(edges)) == 14


def test_support_with_edges_is_plain_support_once_every_extreme_is_measured():
    design = {**RECOMMENDED_LIKE, "cost_exponent": 0, "stop": {"error_pct": 0, "max_runs": 16}}
    plain = [a for _, a in campaign(design, seed=3)[1].asked]
    edges = [a for _, a in campaign({**design, "sampling": "support+edges"}, seed=3)[1].asked]
    start = plain[:2 * len(SPACE.names) + 2]
    # on this full grid the start already holds every extreme level: nothing to add
    assert all({min(t.levels), max(t.levels)} <= {a[i] for a in start}
               for i, t in enumerate(SPACE.attributes))
    assert edges == plain


def test_support_with_edges_tries_an_extreme_level_once_when_its_run_fails():
    space = _rare_edge_space()
    design = {**RECOMMENDED_LIKE, "sampling": "support+edges",
              "stop": {"error_pct": 0, "max_runs": 14}}
    rare = {a for a in space.candidates if a[0] == 4000.0}
    asked = [a for _, a in campaign(design, seed=3, space=space, fail=rare)[1].asked]
    assert sum(a in rare for a in asked) == 1  # one failed run at cpu 4000, then no more


def test_a_reweighted_criterion_ignores_an_attribute_of_weight_zero_and_reverts_exactly():
    _, crit, seen, pool = _two_seen()
    before = crit.of(pool)
    crit.reweight(np.array([1.0, 0.0]))
    weighted = crit.of(pool)
    by_x0: dict[float, set[float]] = {}
    for c, v in zip(pool, weighted, strict=True):
        by_x0.setdefault(c[0], set()).add(round(float(v), 9))
    assert all(len(values) == 1 for values in by_x0.values())  # x1 no longer counts
    assert pool[int(np.argmin(weighted))][0] not in {a[0] for a in seen}  # spreads in x0
    crit.reweight(np.ones(2))
    assert np.allclose(crit.of(pool), before)  # the incremental sums are rebuilt


def test_relevance_support_spreads_runs_over_the_attributes_that_change_the_run_time():
    # in the synthetic truth, T depends on cpu and lat, not on mem
    design = {**RECOMMENDED_LIKE, "cost_exponent": 0, "stop": {"error_pct": 0, "max_runs": 20}}
    plain = campaign({**design, "sampling": "support+edges"}, seed=3)
    planner, runner, result = campaign({**design, "sampling": "support+edges+relevance"},
                                       seed=3)
    weights = planner.strategies.sampling.energy.weights
    assert weights[1] == min(weights) < 1.0 and max(weights) == 1.0  # mem weighs least
    start = 2 * len(SPACE.names) + 2
    picks = [a for _, a in runner.asked]
    assert picks[:start] == [a for _, a in plain[1].asked][:start]  # the same start
    assert len(picks) == len(set(picks)) == 20
    relevant_pairs = len({(a[0], a[2]) for a in picks})
    assert relevant_pairs > len({(a[0], a[2]) for _, a in plain[1].asked})
    assert result.external_mape_pct is not None and result.external_mape_pct < 5
