"""A family model's 90% interval from the out-of-fold errors of the cross-validation that
chose it (``nimo.families.interval``), exported with it and said by ``nimo predict``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nimo.families import AUTO_CANDIDATES, choose_family
from nimo.families.interval import interval_doc, interval_of
from nimo.families.reach import distance
from nimo.model.family import load_any
from tests.unit.test_families import grid
from workbench.cli import main


def test_the_ranks_are_split_conformal_and_need_19_errors_at_90_percent() -> None:
    r = np.arange(19, dtype=float)[::-1]  # unsorted on purpose
    doc = interval_doc(r)
    assert doc == {"level": 0.9, "log_lo": 0.0, "log_hi": 18.0, "residuals": 19}
    assert interval_doc(r[:18]) is None
    assert interval_doc([*r, np.inf, -np.inf, np.nan]) == doc  # non-finite ones dropped
    wide = interval_doc(np.arange(99, dtype=float))
    assert wide is not None and (wide["log_lo"], wide["log_hi"]) == (4.0, 94.0)  # ranks 5, 95
    assert interval_of(None, 10.0) is None
    assert interval_of({"log_lo": np.log(0.5), "log_hi": np.log(2.0), "level": 0.9,
                        "residuals": 19}, 10.0) == pytest.approx((5.0, 20.0))


def test_fresh_errors_from_the_same_distribution_fall_inside_nine_times_in_ten() -> None:
    rng = np.random.default_rng(7)
    inside = []
    for _ in range(400):
        doc = interval_doc(rng.normal(0.1, 0.3, 60))
        assert doc is not None
        fresh = rng.normal(0.1, 0.3, 50)
        inside.append(np.mean((fresh >= doc["log_lo"]) & (fresh <= doc["log_hi"])))
    assert 0.88 <= float(np.mean(inside)) <= 0.93


def test_a_chosen_family_keeps_its_interval_and_the_runs_it_never_saw_fall_inside() -> None:
    rows, T = grid(noise=0.05)
    rng = np.random.default_rng(3)
    T = T * np.exp(rng.normal(0, 0.05, T.size))
    choice = choose_family(AUTO_CANDIDATES, rows, T, numeric=["P", "C"])
    doc = choice.model.training["interval"]
    assert doc["residuals"] == len(rows) and doc["log_lo"] < 0 < doc["log_hi"]
    assert choice.model.training["honest_error_pct"] == choice.errors
    fresh = np.array([(2 + 30 / r["P"]) * (0.5 + 40 / r["C"]) for r in rows]) \
        * np.exp(rng.normal(0, 0.07, len(rows)))
    lo, hi = np.array([interval_of(doc, float(p)) for p in choice.model.predict(rows)]).T
    assert np.mean((fresh >= lo) & (fresh <= hi)) >= 0.75


def test_nimo_predict_gives_a_chosen_familys_interval_and_says_why_another_has_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, T = grid(noise=0.03)
    runs = tmp_path / "runs.csv"
    runs.write_text("P,C,T\n" + "".join(f"{r['P']},{r['C']},{t}\n"
                                         for r, t in zip(rows, T, strict=True)))
    auto, product, bare = tmp_path / "a.json", tmp_path / "p.json", tmp_path / "b.json"
    for family, out, extra in (("auto", auto, []), ("product", product, []),
                               ("product", bare, ["--no-cv"])):
        assert main(["model", "fit", str(runs), "--family", family, "--attributes", "P,C",
                     "-o", str(out), *extra]) == 0
    said = capsys.readouterr().out
    assert "product model (5-fold cross-validated MAPE " in said
    doc = json.loads(auto.read_text())["training"]["interval"]
    assert main(["predict", str(auto), "P=3", "C=50"]) == 0
    line = capsys.readouterr().out
    T_ = float(line.split()[2])
    model = load_any(str(auto))
    d = float(distance(model.encoder, doc["reach"], [{"P": 3.0, "C": 50.0}])[0])
    assert d > 0  # P=3, C=50 was never run
    lo, hi = interval_of(doc, T_, d)  # type: ignore[misc]
    assert (f"90% interval {lo:.4g} .. {hi:.4g} s from {len(rows)} out-of-fold errors and "
            "this assignment's distance from the runs") in line
    assert main(["predict", str(product), "P=3", "C=50"]) == 0
    assert "family product; 90% interval" in capsys.readouterr().out
    assert main(["predict", str(bare), "P=3", "C=50"]) == 0
    assert "no interval: it was fitted without cross-validation (nimo model fit --no-cv" \
        in capsys.readouterr().out


def test_the_coverage_benchmark_judges_only_configurations_it_did_not_train_on(
        tmp_path: Path) -> None:
    from benchmarks.family_intervals import campaign, report
    from benchmarks.learning.suites import Case

    rows, T = grid(noise=0.03)
    path = tmp_path / "g.csv"
    path.write_text("P,C,T\n" + "".join(f"{r['P']},{r['C']},{t}\n{r['P']},{r['C']},{t * 1.02}\n"
                                         for r, t in zip(rows, T, strict=True)))
    case = Case("test", "g", path, ("P", "C"), "real", len(rows))
    rec = campaign(case, seed=1, train_share=0.7)
    assert rec["train_runs"] + rec["judged"] == 2 * len(rows)
    assert rec["train_runs"] == 2 * round(0.7 * len(rows))  # both repeats on one side
    for how in ("constant", "widened"):
        r = rec[how]
        assert r["scored"] == rec["judged"] and 0 <= r["inside"] <= r["scored"]
        assert 0 <= r["far_inside"] <= r["far"] <= r["scored"] // 2 + 1
    assert campaign(case, seed=1, train_share=0.7) == rec  # seeded
    text = report("test", [rec])
    assert "constant campaigns   1" in text and "widened  campaigns   1" in text


@pytest.mark.parametrize("garbled", [{"log_lo": "x", "log_hi": 1.0}, {"log_lo": 1.0},
                                     {"log_lo": 0.5, "log_hi": 0.1}, [1, 2],
                                     {"log_lo": 0.0, "log_hi": float("inf")},
                                     {"log_lo": -0.1, "log_hi": 0.1},  # no level, no count
                                     {"log_lo": -0.1, "log_hi": 0.1, "level": 0.9,
                                      "residuals": "20"}])
def test_a_garbled_interval_is_one_line_naming_the_field(tmp_path: Path, garbled: object,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    rows, T = grid(noise=0.03)
    doc = choose_family(AUTO_CANDIDATES, rows, T, numeric=["P", "C"]).model.to_dict()
    doc["training"]["interval"] = garbled
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    assert main(["predict", str(path), "P=3", "C=50"]) == 2
    err = capsys.readouterr().err
    assert "bad field 'training.interval'" in err and len(err.strip().splitlines()) == 1
