"""The small cloud-configuration generator and its suites (benchmarks/learning/smallgen.py)."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.learning import evaluate, smallgen, suites
from workbench.replay import load_dataset

SEEDS = [*range(200000, 200040), *range(300000, 300020)]


def test_same_seed_same_job(tmp_path: Path) -> None:
    a, b = smallgen.make_small_app(200007), smallgen.make_small_app(200007)
    assert a.to_dict() == b.to_dict() and a.assignments == b.assignments
    pa = smallgen.write_small_app(a, tmp_path / "a.csv")
    pb = smallgen.write_small_app(b, tmp_path / "b.csv")
    assert pa.read_text() == pb.read_text()
    assert smallgen.make_small_app(200008).to_dict() != a.to_dict()


def test_small_suites_disjoint_and_large_enough() -> None:
    t, e = set(suites.SMALL_TUNING_SEEDS), set(suites.SMALL_EVALUATION_SEEDS)
    every = [set(suites.TUNING_SEEDS), set(suites.EVALUATION_SEEDS), t, e]
    assert all(not x & y for i, x in enumerate(every) for y in every[i + 1:])
    assert len(suites.suite_seeds("tuning-small")) >= 50
    assert len(suites.suite_seeds("evaluation-small")) >= 50
    jobs = {s: json.dumps(smallgen.make_small_app(s).to_dict()["hidden"], sort_keys=True)
            for s in [*suites.suite_seeds("tuning-small", 50),
                      *suites.suite_seeds("evaluation-small", 50)]}
    assert len(set(jobs.values())) == 100


def test_shape_like_cloud_configuration_sets() -> None:
    sizes = []
    for seed in SEEDS:
        app = smallgen.make_small_app(seed)
        sizes.append(len(app.assignments))
        assert smallgen.MIN_CONFIGS <= len(app.assignments) <= smallgen.MAX_CONFIGS
        assert len(set(app.assignments)) == len(app.assignments)
        assert 3 <= len(app.attributes) <= 6
        assert "nodes" in app.attributes and len(app.categorical) <= 2
        # the family is a categorical column or shows as memory per node next to the size
        assert "family" in app.attributes or {"vcpus_per_node", "mem_gib_per_node"} <= set(
            app.attributes)
        for c in app.categorical:  # 2-4 levels, each one present
            assert 2 <= len(app.levels[c]) <= 4
            assert app.levels[c] == tuple(float(k) for k in range(1, len(app.levels[c]) + 1))
        axes = [a for a in app.attributes if a not in ("family", "mem_gib_per_node")]
        full = len(app.hidden["speed"]) * math.prod(len(app.levels[a]) for a in axes)
        assert len(app.assignments) < full  # irregular: never the full grid
        assert 0.01 <= app.noise <= 0.10 and 1 <= app.repeats <= 3
    assert min(sizes) < 50 and max(sizes) > 150  # the whole range is used


def test_times_positive_and_physics() -> None:
    """T > 0 everywhere; more vCPUs per node never slower; a larger input never faster."""
    checked = Counter[str]()
    for seed in SEEDS[:30]:
        app = smallgen.make_small_app(seed)
        for a in app.assignments:
            point = dict(zip(app.attributes, a, strict=True))
            T = app.time(point)
            assert math.isfinite(T) and T > 0
            full = app.full(point)
            assert smallgen.cluster_time(app.hidden, app.params, full) == T
            for name in ("vcpus_per_node", "input_gb"):
                if name not in point:
                    continue
                higher = [v for v in app.levels[name] if v > point[name]]
                if not higher:
                    continue
                T2 = smallgen.cluster_time(app.hidden, app.params, {**full, name: higher[0]})
                assert (T2 <= T * (1 + 1e-9)) if name == "vcpus_per_node" else T2 >= T
                checked[name] += 1
    assert checked["vcpus_per_node"] > 50 and checked["input_gb"] > 50


def test_family_only_as_memory_per_node() -> None:
    """Jobs without a family column: memory per vCPU names the family (several families
    show), and mem_gib_per_node = vcpus x the family's GiB per vCPU."""
    hidden = [smallgen.make_small_app(s) for s in SEEDS]
    hidden = [a for a in hidden if "family" not in a.attributes]
    assert 0.2 * len(SEEDS) <= len(hidden) <= 0.6 * len(SEEDS)
    for app in hidden:
        i_c, i_m = (app.attributes.index(n) for n in ("vcpus_per_node", "mem_gib_per_node"))
        families = {app.full(dict(zip(app.attributes, a, strict=True)))["family"]
                    for a in app.assignments}
        assert len(families) >= 2
        for a in app.assignments:
            fam = int(app.full(dict(zip(app.attributes, a, strict=True)))["family"])
            assert a[i_m] == pytest.approx(a[i_c] * app.hidden["mem_per_vcpu"][fam - 1],
                                           rel=1e-3)


def test_scale_out_can_turn_up() -> None:
    """Amdahl plus communication: on some jobs the largest cluster is not the fastest."""
    turned = 0
    for seed in SEEDS:
        app = smallgen.make_small_app(seed)
        nodes = app.levels["nodes"]
        Ts = [app.time({"nodes": n}) for n in nodes]
        turned += min(range(len(Ts)), key=Ts.__getitem__) < len(Ts) - 1
    assert 0 < turned < len(SEEDS)


def test_case_replays_with_categorical_codes(tmp_path: Path) -> None:
    case = next(c for c in suites.load_suite("tuning-small", tmp_path, 20)
                if len(c.categorical) == 2)
    with case.csv.open(newline="") as fh:
        header = next(csv.reader(fh))
    assert header == [*case.attributes, "T"]
    ds = load_dataset(case.csv, list(case.attributes), "T", load=case.load,
                      categorical=case.categorical)
    assert len(ds.assignments) == case.configurations
    assert set(ds.categories) == set(case.categorical)


def test_recode_follows_the_train_rows() -> None:
    train = [{"family": "1"}, {"family": "3"}, {"family": "4"}]
    rows = [{"family": "3", "T": "1"}, {"family": "2", "T": "2"}, {"family": "4", "T": "3"}]
    out = evaluate.recode(rows, train, ["family"])
    assert out == [{"family": "2", "T": "1"}, {"family": "3", "T": "3"}]
    assert evaluate.recode(rows, train, []) == rows


def test_small_cases_judged_like_real_data(tmp_path: Path) -> None:
    """Judge and external sets are 15% / 20% of the configurations (>= 2 / >= 3), as on the
    real groups; cache files carry both generator versions."""
    case = suites.load_suite("evaluation-small", tmp_path, 3)[0]
    assert case.kind == "small" and case.suite == "evaluation-small"
    n = case.configurations
    assert evaluate.sizes(case, None, None) == (max(2, round(0.15 * n)), max(3, round(0.2 * n)))
    assert case.csv.name == (f"small-{300000}-v{suites.appgen.GENERATOR_VERSION}"
                             f".{smallgen.SMALL_VERSION}.csv")


def test_small_campaign_through_the_cli(tmp_path: Path) -> None:
    """A small case with a categorical column and a load replays (--categorical, --load) and
    its judge runs are scored by the delivered model; the marks are recorded."""
    case = next(c for c in suites.load_suite("tuning-small", tmp_path, 20)
                if c.categorical and c.load and c.configurations < 80)
    j, e = evaluate.sizes(case, None, None)
    rec = evaluate.run_campaign(evaluate.Job(case, "baseline-random", 1, j, e))
    assert rec["exit"] == 0, rec.get("error")
    assert rec["judge_runs"] >= j and 0.0 <= rec["coverage"] <= 1.0
    assert set(rec["marks"]) == {"0.1", "0.2", "0.3"}
    assert all(m["mape"] is not None and m["mape"] >= 0 for m in rec["marks"].values())
