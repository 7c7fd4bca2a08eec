"""A family model's interval widens with the distance from its training runs
(``nimo.families.reach``, the widening of ``nimo.families.interval``), and ``nimo predict``
says when an assignment lies beyond every run the interval was checked on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nimo.families import AUTO_CANDIDATES, choose_family
from nimo.families.encoding import Encoder
from nimo.families.interval import interval_doc, interval_of
from nimo.families.reach import distance, held_out_distances, reach_doc
from nimo.families.select import folds
from tests.unit.test_families import grid
from workbench.cli import main


def test_distances_are_knn_units_and_zero_at_a_training_point() -> None:
    rows = [{"n": n, "disk": d} for n in (1.0, 4.0, 16.0) for d in ("hdd", "ssd")]
    enc = Encoder.fit(rows, ["n"], ["disk"])
    doc = reach_doc(enc, rows)
    assert len(doc["points"]) == 6 and doc["log"] == [True]
    d = distance(enc, doc, [{"n": 4.0, "disk": "ssd"}, {"n": 2.0, "disk": "hdd"},
                            {"n": 64.0, "disk": "hdd"}])
    # log2 scale over a range of log(16): n=2 is a quarter of it from n=1; n=64 half beyond 16
    assert d == pytest.approx([0.0, 0.25, 0.5])


def test_held_out_distances_follow_the_folds_order_and_measure_to_the_fold_only() -> None:
    rows = [{"x": float(x)} for x in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)]
    enc = Encoder.fit(rows, ["x"])
    _, splits = folds(rows, extrapolate_on="x")  # the largest levels, each from those below
    d = held_out_distances(enc, reach_doc(enc, rows), rows, splits)
    span = np.log(11) - np.log(1)
    # each split trains below its origin and predicts every level from it up (horizons)
    expect = [(np.log(rows[int(i)]["x"]) - np.log(rows[int(train.max())]["x"])) / span
              for train, test in splits for i in test]
    assert d == pytest.approx(expect)


def test_widening_scales_by_the_errors_growth_line_and_keeps_the_constant_bounds() -> None:
    d = np.linspace(0.1, 1.0, 19)
    sign = np.where(np.arange(19) % 2 == 0, 1.0, -1.0)
    r = sign * 0.2 * (0.3 + d)  # sizes on the line 0.2 (0.3 + d)
    doc = interval_doc(r, distances=d, configurations=19)
    assert doc is not None and (doc["log_lo"], doc["log_hi"]) == (r.min(), r.max())
    assert doc["widening"] == pytest.approx({"gamma": 0.3, "score_lo": -0.2, "score_hi": 0.2,
                                             "checked_from": 0.1, "checked_to": 1.0})
    lo0, hi0 = interval_of(doc, 10.0, 0.0)  # type: ignore[misc]
    assert (lo0, hi0) == pytest.approx(interval_of(doc, 10.0, 0.1))  # never narrower than seen
    lo2, hi2 = interval_of(doc, 10.0, 2.0)  # type: ignore[misc]
    assert lo2 < lo0 < 10.0 < hi0 < hi2 and hi2 == pytest.approx(10.0 * np.exp(0.2 * 2.3))
    assert interval_of(doc, 10.0) == pytest.approx((10.0 * np.exp(r.min()), 10.0 * np.exp(r.max())))
    lo, hi = interval_of(doc, 10.0, 1e6)  # type: ignore[misc]
    assert 0.0 <= lo < 1e-80 and 1e80 < hi < np.inf  # exponents held at +-700: no overflow


def test_no_widening_from_too_few_configurations_or_errors_that_do_not_grow() -> None:
    d = np.linspace(0.1, 1.0, 38)
    growing = np.where(np.arange(38) % 2 == 0, 1.0, -1.0) * (0.1 + d)
    assert "widening" in interval_doc(growing, distances=d, configurations=19)  # type: ignore[operator]
    # 38 runs, but 2 repeats of 18 configurations (+2): the interval, no widening
    assert "widening" not in interval_doc(growing, distances=d, configurations=18)  # type: ignore[operator]
    shrinking = growing[::-1].copy()  # the same sizes, largest nearest
    assert "widening" not in interval_doc(shrinking, distances=d, configurations=38)  # type: ignore[operator]
    assert "widening" not in interval_doc(growing, distances=np.full(38, 0.5),  # type: ignore[operator]
                                          configurations=38)


def test_errors_that_grow_with_distance_are_covered_near_and_far() -> None:
    rng = np.random.default_rng(5)
    near_in, far_in, const_far = [], [], []
    for _ in range(200):
        d = rng.uniform(0.0, 1.0, 80)
        doc = interval_doc(rng.normal(0.0, 0.05 + 0.3 * d), distances=d, configurations=80)
        assert doc is not None
        fresh_d = rng.uniform(0.0, 1.0, 60)
        fresh = rng.normal(0.0, 0.05 + 0.3 * fresh_d)
        inside = np.array([lo <= np.exp(f) <= hi for f, (lo, hi) in zip(
            fresh, [interval_of(doc, 1.0, x) for x in fresh_d], strict=True)])  # type: ignore[misc]
        far = fresh_d > 0.5
        near_in.append(inside[~far].mean())
        far_in.append(inside[far].mean())
        const_far.append(np.mean((fresh[far] >= doc["log_lo"]) & (fresh[far] <= doc["log_hi"])))
    assert 0.85 <= np.mean(far_in) and 0.85 <= np.mean(near_in)
    assert np.mean(const_far) < 0.85 < np.mean(far_in)  # the constant one misses far away


def _auto_model(tmp_path: Path) -> tuple[Path, dict]:
    rows, T = grid(noise=0.03)
    doc = choose_family(AUTO_CANDIDATES, rows, T, numeric=["P", "C"]).model.to_dict()
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return path, doc


def test_predict_warns_beyond_the_checked_distance_and_widens_there(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, doc = _auto_model(tmp_path)
    assert "widening" in doc["training"]["interval"]
    assert main(["predict", str(path), "P=3", "C=50"]) == 0
    near = capsys.readouterr()
    assert "farther from the training runs" not in near.err
    assert main(["predict", str(path), "P=64", "C=50"]) == 0
    far = capsys.readouterr()
    assert "lies farther from the training runs" in far.err
    assert "the prediction and its interval are extrapolations" in far.err

    def width(out: str) -> float:
        words = out.split()
        T, lo, hi = float(words[2]), float(words[words.index("interval") + 1]), \
            float(words[words.index("..") + 1])
        return (hi - lo) / T
    assert width(far.out) > width(near.out)


@pytest.mark.parametrize(("key", "garbled"), [
    ("widening", {"gamma": 0.0, "score_lo": -1, "score_hi": 1, "checked_to": 1}),
    ("widening", {"gamma": 1.0, "score_lo": 1, "score_hi": -1, "checked_to": 1}),
    ("widening", {"gamma": 1.0, "score_lo": -1, "score_hi": 1, "checked_to": 1,
                  "checked_from": 2}),
    ("widening", {"gamma": 1.0}), ("widening", "x"),
    ("reach", {"log": [True, True], "lo": [0, 0], "span": [1, 1], "points": [[0, 0, 0]]}),
    ("reach", {"log": [True], "lo": [0], "span": [1], "points": [[0]]}), ("reach", []),
    ("reach", None)])
def test_a_garbled_widening_or_reach_is_one_line_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, garbled: object) -> None:
    path, doc = _auto_model(tmp_path)
    if garbled is None:  # a widening without its training points
        del doc["training"]["interval"][key]
    else:
        doc["training"]["interval"][key] = garbled
    path.write_text(json.dumps(doc))
    assert main(["predict", str(path), "P=3", "C=50"]) == 2
    err = capsys.readouterr().err
    assert f"bad field 'training.interval.{key}'" in err and len(err.strip().splitlines()) == 1


def test_model_fit_extrapolate_on_uses_rolling_origins_and_refuses_what_it_cannot(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("n,k,T\n" + "".join(f"{n},{k},{(5 + 100 / n) * k}\n"
                                         for n in range(4, 44, 4) for k in (1, 2)))
    out = tmp_path / "m.json"
    assert main(["model", "fit", str(runs), "--family", "auto", "--attributes", "n,k",
                 "--extrapolate-on", "n", "-o", str(out)]) == 0
    assert "chosen by extrapolate cross-validation" in capsys.readouterr().out
    assert json.loads(out.read_text())["training"]["chosen_by"] == "extrapolate"
    for extra, words in ((["--extrapolate-on", "T2"], "--extrapolate-on column 'T2' is not "
                          "among the numeric --attributes (valid: n, k)"),
                         (["--extrapolate-on", "n", "--no-cv"], "which --no-cv skips")):
        code = main(["model", "fit", str(runs), "--family", "product", "--attributes", "n,k",
                     "-o", str(tmp_path / "x.json"), *extra])
        err = capsys.readouterr().err
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_the_extrapolation_benchmark_judges_only_the_runs_beyond_the_cut(
        tmp_path: Path) -> None:
    from benchmarks.family_extrapolation import WAYS, campaign, report
    from benchmarks.learning.suites import Case

    path = tmp_path / "s.csv"
    path.write_text("n,T\n" + "".join(f"{n},{(5 + 100 / n) * f}\n" for n in range(4, 64, 4)
                                      for f in (0.98, 1.0, 1.03)))
    rec = campaign(Case("test", "s", path, ("n",), "real", 15), "n", 32.0)
    for way in WAYS:
        r = rec[way]
        assert r["scored"] in (0, 7 * 3) and 0 <= r["inside"] <= r["scored"]  # n = 36..60
        assert r["honest"] is not None and r["mape"] >= 0
        # levels 36 / 40 / 44..60 beyond the cut: 3 / 3 / 15 runs
        assert [r["horizon"][h][1] for h in ("1", "2", "3+")] in ([0, 0, 0], [3, 3, 15])
        assert sum(h[0] for h in r["horizon"].values()) == r["inside"]
    lines = report([rec])
    assert "campaigns   1" in lines[0] and "1st / 2nd / 3rd+ level beyond the cut" in lines[1]


def test_the_extrapolation_benchmark_cuts_at_every_level_and_skips_unseen_categories(
        tmp_path: Path) -> None:
    from benchmarks.family_extrapolation import campaign, cuts
    from benchmarks.learning.suites import Case

    path = tmp_path / "s.csv"
    # kind "b" only ever runs on 48+ nodes: no model trained at or below a cut can know it
    path.write_text("n,kind,T\n" + "".join(
        f"{n},{k},{(5 + 100 / n) * (1 + (k == 'b'))}\n" for n in range(4, 64, 4)
        for k in ("a", "b") if k == "a" or n >= 48))
    case = Case("test", "s", path, ("n", "kind"), "real", 18, categorical=("kind",))
    assert cuts(case, "n", "levels") == [float(n) for n in range(16, 60, 4)]
    assert cuts(case, "n", "20,40") == [20.0, 40.0]
    rec = campaign(case, "n", 32.0)
    assert all(rec[w]["scored"] in (0, 7) for w in ("default folds", "extrapolate folds"))


def test_model_score_gives_the_interval_coverage_of_either_kind_of_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.unit.test_far_share import write_app

    data = write_app(tmp_path / "app.csv")
    url = f"sqlite:///{tmp_path}/nimo.db"
    assert main(["replay", str(data), "--store", url, "--name", "c", "--quiet",
                 "--attributes", "cpu,mem", "--external-test", "2"]) in (0, 1)
    cost, family = tmp_path / "cost.json", tmp_path / "family.json"
    assert main(["model", "export", "c", "--store", url, "-o", str(cost)]) == 0
    assert main(["model", "fit", str(data), "--family", "auto", "--attributes", "cpu,mem",
                 "-o", str(family)]) == 0
    capsys.readouterr()
    for model in (cost, family):
        report = tmp_path / "score.json"
        assert main(["model", "score", str(model), str(data), "--json", str(report)]) == 0
        line = capsys.readouterr().out
        doc = json.loads(report.read_text())
        inside = [r["lo"] <= r["T"] <= r["hi"] for r in doc["records"]]
        assert len(inside) == 20 and doc["coverage_90"] == pytest.approx(np.mean(inside))
        assert (f"90% interval held {np.mean(inside):.0%} ({sum(inside)} of 20 runs)"
                in line)
    bare = tmp_path / "bare.json"
    assert main(["model", "fit", str(data), "--family", "product", "--attributes", "cpu,mem",
                 "--no-cv", "-o", str(bare)]) == 0
    assert main(["model", "score", str(bare), str(data)]) == 0
    assert capsys.readouterr().out.strip().endswith(", no 90% interval")


def test_predict_says_an_extrapolated_interval_is_likely_too_narrow(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.csv"
    rng = np.random.default_rng(3)
    runs.write_text("n,T\n" + "".join(f"{n},{(5 + 100 / n) * rng.uniform(0.95, 1.05)}\n"
                                      for n in range(4, 36, 4) for _ in range(3)))
    model = tmp_path / "m.json"
    assert main(["model", "fit", str(runs), "--family", "auto", "--attributes", "n",
                 "-o", str(model)]) == 0
    assert json.loads(model.read_text())["training"]["interval"]
    capsys.readouterr()
    assert main(["predict", str(model), "n=20"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["predict", str(model), "n=64"]) == 0
    out, err = capsys.readouterr()
    assert "90% interval" in out
    assert err.strip() == ("nimo predict: warning: n=64 is outside the measured range 4 .. 32: "
                           "the prediction is an extrapolation, and its 90% interval is likely "
                           "too narrow there")
