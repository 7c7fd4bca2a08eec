"""The learning benchmark: generated applications, suites and the harness's metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks.learning import appgen, evaluate, metrics, suites
from workbench.replay import load_dataset

SEEDS = [*range(0, 40), *range(100000, 100010)]
CAPACITY = [e.name for e in appgen.CATALOGUE if e.role == "capacity"]


def test_same_seed_same_application(tmp_path: Path) -> None:
    a, b = appgen.make_app(7), appgen.make_app(7)
    assert a.to_dict() == b.to_dict()
    pa, pb = appgen.write_app(a, tmp_path / "a.csv"), appgen.write_app(b, tmp_path / "b.csv")
    assert pa.read_text() == pb.read_text()
    assert appgen.make_app(8).to_dict() != a.to_dict()


def test_generated_shape() -> None:
    for seed in SEEDS:
        app = appgen.make_app(seed)
        assert 2 <= len(app.attributes) <= 8
        assert len(set(app.attributes)) == len(app.attributes)
        assert 0.01 <= app.noise <= 0.10 and 1 <= app.repeats <= 5
        assert 0.0 <= app.missing_fraction <= 0.41
        full = math.prod(len(v) for v in app.levels.values())
        # issue 9's unseen applications held 1,500 assignments: every app >= 1,000 before
        # points are dropped, so that 2% of the all-samples time is >= ~12 runs
        assert 1000 <= appgen.MIN_GRID <= full <= appgen.MAX_GRID
        assert 0.59 * appgen.MIN_GRID <= len(app.assignments) <= full
        assert max(len(v) for v in app.levels.values()) <= appgen.MAX_LEVELS
        for levels in app.levels.values():
            assert list(levels) == sorted(set(levels)) and len(levels) >= 2


def test_suites_are_disjoint() -> None:
    tuning, evaluation = set(suites.TUNING_SEEDS), set(suites.EVALUATION_SEEDS)
    assert not tuning & evaluation
    assert len(suites.suite_seeds("tuning")) >= 50
    assert len(suites.suite_seeds("evaluation")) >= 50
    t = {json.dumps(appgen.make_app(s).to_dict()["params"], sort_keys=True)
         for s in suites.suite_seeds("tuning", 50)}
    e = {json.dumps(appgen.make_app(s).to_dict()["params"], sort_keys=True)
         for s in suites.suite_seeds("evaluation", 50)}
    assert not t & e


def _point(app: appgen.AppSpec, a: tuple[float, ...]) -> dict[str, float]:
    return dict(zip(app.attributes, a, strict=True))


def test_times_positive_and_finite_everywhere(tmp_path: Path) -> None:
    for seed in SEEDS[:8]:
        app = appgen.make_app(seed)
        for row in appgen.rows(app):
            assert math.isfinite(row["T"]) and row["T"] > 0
            assert row["T"] == pytest.approx(row["D"] * (row["o_a"] + row["o_n"] + row["o_d"]),
                                             rel=1e-5)
            assert 0 < row["U"] <= 1


def _vary(app: appgen.AppSpec, name: str):
    """Pairs (noiseless T at a lower level, at the next level) of ``name``, others fixed."""
    others = [a for a in app.attributes if a != name]
    base = {a: app.levels[a][len(app.levels[a]) // 2] for a in others}
    levels = app.levels[name]
    for lo, hi in zip(levels, levels[1:], strict=False):
        yield app.time({**base, name: lo}), app.time({**base, name: hi})


def test_more_capacity_never_slower_more_load_never_faster() -> None:
    checked = 0
    for seed in SEEDS:
        app = appgen.make_app(seed)
        for name in app.attributes:
            role = appgen.BY_NAME[name].role
            for t_lo, t_hi in _vary(app, name):
                checked += 1
                if role == "capacity":
                    assert t_hi <= t_lo * (1 + 1e-12), (seed, name)
                elif role in ("inverse", "load"):
                    assert t_hi >= t_lo * (1 - 1e-12), (seed, name)
    assert checked > 100


def test_cpu_bound_app_faster_with_more_cpu() -> None:
    found = 0
    for seed in range(300):
        app = appgen.make_app(seed)
        if "cpu_mhz" not in app.attributes or app.params["share_a"] < 0.7:
            continue
        found += 1
        pairs = list(_vary(app, "cpu_mhz"))
        assert all(hi <= lo for lo, hi in pairs)
        assert pairs[0][1] < pairs[0][0]  # strictly faster: compute dominates
    assert found >= 3


def test_cliff_app_slower_below_working_set() -> None:
    found = big = 0
    for seed in range(300):
        app = appgen.make_app(seed)
        p = app.params
        if "mem_mb" not in app.attributes or not p["cliff"] or p["ws_scales_with_input"]:
            continue
        below = [m for m in app.levels["mem_mb"] if m < p["ws_mb"]]
        above = [m for m in app.levels["mem_mb"] if m >= p["ws_mb"]]
        if not below or not above:
            continue
        base: dict[str, float] = {}  # every other attribute at its catalogue default
        t_below = app.time({**base, "mem_mb": max(below)})
        t_above = app.time({**base, "mem_mb": min(above)})
        assert t_below > t_above, (seed, p["cliff"])
        found += 1
        big += t_below > 1.2 * t_above
    assert found >= 5 and big >= found / 2


def test_csv_loads_for_replay(tmp_path: Path) -> None:
    app = appgen.make_app(3)
    path = appgen.write_app(app, tmp_path / "app.csv")
    ds = load_dataset(path)
    assert ds.kind == "occupancy"
    assert tuple(ds.space.names) == app.attributes
    assert len(ds.runs) == len(app.assignments)
    assert all(len(s) == app.repeats for s in ds.runs.values())
    assert json.loads(path.with_suffix(".json").read_text())["seed"] == 3


def test_real_suites(tmp_path: Path) -> None:
    if not suites.SCOUT_CSV.exists() or not suites.BELL_CSV.exists():
        pytest.skip("shared datasets not present")
    scout = suites.load_suite("scout", tmp_path)
    assert len(scout) == 18 and all(c.configurations >= 29 for c in scout)
    bell = suites.load_suite("bell", tmp_path)
    assert len(bell) == 6 and all(c.configurations == 15 for c in bell)
    ds = load_dataset(bell[0].csv, ["nodes"])
    assert ds.kind == "direct" and all(len(s) == 7 for s in ds.runs.values())


def test_tiny_campaign_through_the_cli(tmp_path: Path) -> None:
    case = suites.generated_case("evaluation", 100001, tmp_path)
    job = evaluate.Job(case, "baseline-random", 1, judge=10, external=10)
    rec = evaluate.run_campaign(job)
    assert rec["exit"] == 0, rec.get("error")
    assert rec["runs"] >= 1 and rec["judge_runs"] >= 10
    assert 0.0 <= rec["coverage"] <= 1.0
    # the judge set never reaches the replay
    header, rows = evaluate.read_case(case.csv, case.attributes)
    keys = [evaluate._key(r, case.attributes) for r in rows]
    judge = evaluate.judge_assignments(case, 1, 10, keys)
    train, judge_rows = evaluate.split_case(job, tmp_path)
    seen = {evaluate._key(r, case.attributes) for r in evaluate.read_case(train, ())[1]}
    assert len(judge) == 10 and not judge & seen
    assert {evaluate._key(r, case.attributes) for r in judge_rows} == judge


# ----------------------------------------------------------------------------- metrics

def test_reach_and_keep() -> None:
    pts = [(1, 10.0, 50.0), (2, 20.0, 9.0), (3, 30.0, 12.0), (4, 40.0, 8.0), (5, 50.0, 7.0)]
    assert evaluate.reach_and_keep(pts, 10.0, final=7.0) == (4, 40.0)
    assert evaluate.reach_and_keep(pts, 10.0, final=11.0) is None   # final model must keep it
    assert evaluate.reach_and_keep(pts[:3], 10.0) is None           # lost it again
    assert evaluate.reach_and_keep([(1, 1.0, None), (2, 2.0, 5.0)], 10.0) == (2, 2.0)
    assert evaluate.reach_and_keep([(1, 1.0, 5.0), (2, 2.0, math.nan)], 10.0) is None
    assert evaluate.reached_within((4, 40.0), 2000.0)               # 2% of 2000 = 40
    assert not evaluate.reached_within((4, 40.1), 2000.0)
    assert not evaluate.reached_within(None, 2000.0)


def test_budget_and_marks() -> None:
    pts = [(1, 10.0, 50.0), (2, 20.0, 30.0), (3, 30.0, 12.0)]
    assert evaluate.mape_at_budget(pts, 5.0, 11.0) is None          # no run fits
    assert evaluate.mape_at_budget(pts, 25.0, 11.0) == 30.0
    assert evaluate.mape_at_budget(pts, 100.0, 11.0) == 11.0        # stopped: delivered model
    assert evaluate.mape_after_runs(pts, 2, 11.0) == (30.0, False)
    assert evaluate.mape_after_runs(pts, 5, 11.0) == (11.0, True)


def test_honesty_coverage_medians() -> None:
    assert evaluate.honesty_ratio([None, 8.0, 4.0, None], 6.0) == pytest.approx(1.5)
    assert evaluate.honesty_ratio([None], 6.0) is None
    assert evaluate.honesty_ratio([0.0], 6.0) == math.inf
    hits = evaluate.interval_hits([(1, 3), (1, 3), (math.nan, math.nan), (0, 1)], [2, 4, 2, 1])
    assert hits == (2, 4, 1)
    assert metrics.median_inf([3.0, None, 1.0]) == 3.0
    assert metrics.median_inf([1.0, None]) == math.inf
    assert metrics.median_inf([1.0, 3.0]) == 2.0
    assert math.isnan(metrics.median_inf([]))


def test_summary_ratio_against_random() -> None:
    def rec(design: str, case: str, reach: int | None) -> dict:
        return {"design": design, "case": case, "seed": 1, "exit": 0, "reach_run": reach,
                "configurations": 1000,
                "reached_within": reach is not None and reach < 20, "final_mape": 5.0,
                "runs": 30, "stop_pct_time": 1.0, "honesty": 1.0, "judge_inside": 9,
                "judge_runs": 10, "coverage": 0.9, "judge_nan_intervals": 0, "judge_mape": 5.0,
                "judge_nonpositive": 0, "wall_s": 1.0, "curve": {}}
    recs = [rec("recommended", "a", 10), rec("recommended", "b", 14),
            rec("baseline-random", "a", 20), rec("baseline-random", "b", 40)]
    s = evaluate.summarize(recs, generated=True)
    assert s["recommended"]["reached_within_share"] == 1.0
    assert s["baseline-random"]["reached_within_share"] == 0.0
    assert s["recommended"]["reach_runs_ratio"] == pytest.approx(12 / 30)
    assert s["recommended"]["reach_runs_ratio_paired_median"] == pytest.approx((0.5 + 0.35) / 2)
    assert s["recommended"]["coverage_pooled"] == pytest.approx(0.9)
    assert s["recommended"]["reached_within_by_size"][">=500"] == [1.0, 2]
