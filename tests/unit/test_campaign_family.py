"""Issue 12, item 3 in live campaigns: a design's ``predictors.family`` fitted when the campaign
ends on its training runs, scored on its holdout runs (``final.family``), stored with the
campaign and exported by ``nimo model export --family``; replay reports the same shape.

The runner is a formula (pure logic: the lifecycle, the family fit and the export); the lab
test ``tests/integration/test_categorical_lab.py`` runs the same on real hosts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from campaign_fakes import FormulaRunner

from nimo.campaign import design_to_dict, execute, new_campaign
from nimo.campaign.family import FamilyData, family_report, space_data
from nimo.model.family import load_any, predict_rows
from nimo.records import CampaignKind, Sample
from nimo.space import Attribute, ResourceSpace
from nimo.store import open_store
from workbench.cli import main

VARIANTS = ("sha1", "sha3_256")  # level 1, level 2
SPACE = ResourceSpace((
    Attribute("cpu_share", (0.25, 0.5, 0.75, 1.0), +1, "compute", "cpu"),
    Attribute("variant", (1.0, 2.0), +1, "compute", "category", categories=VARIANTS),
))
WORK_S = {"sha1": 2.0, "sha3_256": 9.0}  # CPU seconds of each variant


def true_T(a: dict[str, float]) -> float:
    return 1.0 + WORK_S[VARIANTS[int(a["variant"]) - 1]] / a["cpu_share"]


def variant_runner() -> FormulaRunner:
    """T from a formula over CPU share and a categorical variant (a run's T only)."""
    return FormulaRunner(SPACE, lambda a: Sample(dict(a), T=true_T(a)))


def design(family: str | None = "auto", max_runs: int = 5) -> dict:
    from nimo.planner.design import parse_design
    from workbench.designs import design_mapping, design_path, merge

    over = {"name": "fam", "stop": {"max_runs": max_runs},
            **({"predictors": {"family": family}} if family else {})}
    return design_to_dict(parse_design(merge(design_mapping(design_path("recommended")),
                                             over)))


def run_live(tmp_path: Path, name: str, family: str = "auto", holdout: int = 3):
    url = f"sqlite:///{tmp_path / 'nimo.db'}"
    store = open_store(url)
    info = new_campaign(store, CampaignKind.LIVE, name, design(family), 3,
                        {"inventory": "none.yaml", "holdout": holdout})
    result = execute(store, info, variant_runner())
    return url, store, result


def test_live_campaign_reports_and_stores_the_family(tmp_path) -> None:
    url, store, result = run_live(tmp_path, "fam-live")
    fam = result.to_dict()["final"]["family"]
    assert fam["chosen_by"] in ("loo", "5-fold") and fam["name"] in fam["honest_error_pct"]
    ranked = [v for v in fam["honest_error_pct"].values() if v is not None]
    assert fam["honest_error_pct"][fam["name"]] == min(ranked)
    training = [r for r in store.runs("fam-live") if r.purpose not in ("holdout", "recheck")]
    assert fam["training_runs"] == len(training) >= 5
    assert fam["holdout_mape_pct"] is not None and fam["holdout_median_ape_pct"] is not None
    assert fam["model"]["encoder"]  # the variant is a category of the model, by name
    assert "sha3_256" in json.dumps(fam["model"]["encoder"])
    assert store.campaign("fam-live").spec["family_result"] == json.loads(json.dumps(fam))
    store.close()


def test_a_fixed_family_is_fitted_as_the_design_says(tmp_path) -> None:
    _, store, result = run_live(tmp_path, "fam-fixed", family="knn")
    fam = result.final_extra["family"]
    assert fam["name"] == "knn" and fam["chosen_by"] == "design"
    assert list(fam["honest_error_pct"]) == ["knn"]
    store.close()


def test_without_a_family_nothing_is_added(tmp_path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'n.db'}")
    plain = design(None, 4)
    info = new_campaign(store, CampaignKind.LIVE, "plain", plain, 1, {"holdout": 2})
    result = execute(store, info, variant_runner())
    assert "family" not in result.to_dict()["final"]
    assert "family_result" not in store.campaign("plain").spec
    store.close()


def test_model_export_family_writes_a_model_that_predicts(tmp_path, capsys) -> None:
    url, store, result = run_live(tmp_path, "fam-export")
    store.close()
    out = tmp_path / "family.json"
    assert main(["model", "export", "fam-export", "--family", "--store", url,
                 "-o", str(out)]) == 0
    assert "family model of fam-export" in capsys.readouterr().out
    model = load_any(out)
    rows = [{"cpu_share": 0.5, "variant": "sha1"}, {"cpu_share": 0.5, "variant": "sha3_256"}]
    predicted = predict_rows(model, rows)
    stored = result.final_extra["family"]["model"]
    assert json.loads(out.read_text()) == json.loads(json.dumps(stored))
    assert predicted[1] > predicted[0]  # the costlier variant predicted slower
    assert main(["campaign", "status", "fam-export", "--store", url]) == 0
    status = capsys.readouterr().out
    assert f"family    family {model.family} (chosen by" in status
    assert main(["campaign", "status", "fam-export", "--store", url, "--format", "json"]) == 0
    family = json.loads(capsys.readouterr().out)["family"]
    assert family["name"] == model.family and "model" not in family


def test_model_export_family_of_a_campaign_without_one(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'n.db'}"
    with open_store(url) as store:
        plain = design(None, 4)
        info = new_campaign(store, CampaignKind.LIVE, "plain", plain, 1, {})
        execute(store, info, variant_runner())
    code = main(["model", "export", "plain", "--family", "--store", url,
                 "-o", str(tmp_path / "m.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "has no family model" in err[0]
    assert not (tmp_path / "m.json").exists()


def test_summary_prints_the_family_line(tmp_path, capsys) -> None:
    from workbench.cli.campaign import summary
    from workbench.exitstatus import verdict

    _, store, result = run_live(tmp_path, "fam-summary")
    store.close()
    doc = result.to_dict()
    summary(doc, verdict(doc))
    out = capsys.readouterr().out
    fam = doc["final"]["family"]
    assert f"fam-summary: family {fam['name']} (chosen by {fam['chosen_by']})" in out
    assert "holdout MAPE" in out and "--family" in out


def test_family_report_scores_the_test_runs_and_names_a_failed_fit() -> None:
    cases = [(a, true_T(a)) for a in map(SPACE.as_dict, SPACE.candidates)]
    train = space_data(SPACE, cases[:6])
    assert train.categorical == ("variant",) and train.numeric == ("cpu_share",)
    assert {r["variant"] for r in train.rows} <= set(VARIANTS)
    test = space_data(SPACE, cases[6:])
    report = family_report({"predictors": {"family": "knn"}}, train, test.rows, test.T,
                           scored_on="holdout")
    predicted = np.array([report["holdout_mape_pct"]])
    assert report["name"] == "knn" and np.isfinite(predicted).all()
    empty = FamilyData([], np.empty(0), numeric=("cpu_share",))
    assert family_report({"predictors": {"family": "knn"}}, empty, [], []) == {
        "error": "no measured run to fit a family on"}
    assert family_report({}, train, [], []) == {}
    lacking = FamilyData(train.rows, train.T, numeric=("cpu_share", "threads"))
    failed = family_report({"predictors": {"family": "paper"}}, lacking, [], [])
    assert failed["name"] == "paper" and "threads" in failed["error"] and "model" not in failed
    sha1 = space_data(SPACE, [c for c in cases if c[0]["variant"] == 1.0])
    unseen = family_report({"predictors": {"family": "knn"}}, sha1, test.rows, test.T,
                           scored_on="holdout")
    assert unseen["model"] and unseen["holdout_mape_pct"] is None
    assert "unknown category 'sha3_256'" in unseen["holdout_error"]


@pytest.mark.parametrize("family", ["paper", "loglog2"])
def test_replay_family_keeps_its_shape(family) -> None:
    """The shared report keeps replay's keys (external errors) for every family."""
    cases = [(a, true_T(a)) for a in map(SPACE.as_dict, SPACE.candidates)]
    train = space_data(SPACE, cases)
    report = family_report({"predictors": {"family": family}}, train, train.rows[:2],
                           train.T[:2])
    assert set(report) >= {"name", "chosen_by", "honest_error_pct", "training_runs",
                           "external_mape_pct", "external_median_ape_pct", "model"}


def test_the_family_report_scores_its_interval_on_the_test_runs_only() -> None:
    from nimo.campaign.family import FamilyData, family_report
    from nimo.families.interval import interval_of
    from nimo.families.model import FamilyModel
    from nimo.families.reach import distance
    from tests.unit.test_families import grid

    rows, T = grid(noise=0.05)
    train = FamilyData(rows, T, numeric=("P", "C"))
    test_rows = [{"P": p, "C": c} for p in (3, 6, 16) for c in (15, 50, 90)]
    test_T = np.array([(2 + 30 / r["P"]) * (0.5 + 40 / r["C"]) for r in test_rows])
    report = family_report({"predictors": {"family": "auto"}}, train, test_rows, test_T)
    model = FamilyModel.from_dict(report["model"])
    doc = model.training["interval"]
    far = distance(model.encoder, doc["reach"], test_rows)
    inside = [interval_of(doc, float(p), float(d)) for p, d in
              zip(model.predict(test_rows), far, strict=True)]
    expect = np.mean([lo <= t <= hi for (lo, hi), t in zip(inside, test_T, strict=True)])
    assert report["external_coverage_90"] == pytest.approx(expect)
    few = FamilyData(rows[:10], T[:10], numeric=("P", "C"))  # under 19 runs: no interval
    assert family_report({"predictors": {"family": "knn"}}, few, test_rows,
                         test_T)["external_coverage_90"] is None


def test_the_family_line_gives_the_holdout_coverage_when_there_is_one() -> None:
    from workbench.cli.campaign_show import family_line

    fam = {"name": "knn", "chosen_by": "loo", "training_runs": 30,
           "honest_error_pct": {"knn": 7.0}, "holdout_mape_pct": 5.0}
    assert "interval held" not in family_line(fam)
    assert "holdout MAPE 5.0%, 90% interval held 80%;" in family_line(
        {**fam, "holdout_coverage_90": 0.8})
