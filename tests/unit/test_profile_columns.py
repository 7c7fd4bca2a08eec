"""Measured profiles as model inputs (issue 12, item 5): ``nimo campaign samples --profile``
columns, and a model fitted on the profiles of one workbench predicting another's runs."""

from __future__ import annotations

import json

import numpy as np

from nimo.records import RunPurpose, RunStatus, Sample
from nimo.records.campaigns import StoredRun
from workbench.cli import main
from workbench.cli.campaign_show import sample_table, write_csv
from workbench.profile_columns import add_profile_columns


def runs(delivered: float, seed: int) -> list[StoredRun]:
    """A workbench whose cpu_share delivers ``delivered`` x the share (a contended host):
    T = 0.5 + 2 / cpu_speed, measured with 1% noise."""
    rng = np.random.default_rng(seed)
    out = []
    for i, share in enumerate((0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0) * 2):
        speed = share * delivered * (1 + 0.01 * rng.standard_normal())
        T = (0.5 + 2 / speed) * (1 + 0.01 * rng.standard_normal())
        profile = {"cpu_speed": speed, "rtt_ms": 0.1} if i != 3 else {"cpu_speed": speed}
        out.append(StoredRun(i + 1, {"cpu_share": share}, RunPurpose.TRAIN, None,
                             RunStatus.DONE, sample=Sample({"cpu_share": share}, T, cost_s=T,
                                                           profile=profile)))
    return out


def test_profile_columns_follow_the_runs():
    rs = runs(1.0, 0)
    header, rows = add_profile_columns(*sample_table(rs), rs)
    assert header[-2:] == ["profile_cpu_speed", "profile_rtt_ms"]
    assert rows[0][-2:] == [rs[0].sample.profile["cpu_speed"], 0.1]
    assert rows[3][-1] is None  # not measured on that run


def export(rs: list[StoredRun], path) -> str:
    write_csv(str(path), *add_profile_columns(*sample_table(rs), rs))
    return str(path)


def test_a_model_on_profiles_predicts_another_workbench(tmp_path, capsys):
    here = export(runs(1.0, 1), tmp_path / "here.csv")
    there = export(runs(0.6, 2), tmp_path / "there.csv")  # 40% of every CPU share is lost
    for attrs in ("cpu_share", "profile_cpu_speed"):
        assert main(["model", "fit", here, "--family", "product", "--attributes", attrs,
                     "-o", str(tmp_path / f"{attrs}.json")]) == 0
        assert main(["model", "score", str(tmp_path / f"{attrs}.json"), there, "--json",
                     str(tmp_path / f"{attrs}-score.json")]) == 0
    on_share = json.loads((tmp_path / "cpu_share-score.json").read_text())["mape_pct"]
    on_profile = json.loads((tmp_path / "profile_cpu_speed-score.json").read_text())["mape_pct"]
    assert on_profile < 5 < 25 < on_share
