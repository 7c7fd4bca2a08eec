"""The share of the candidate space far from every run: recorded by a bounded model
(``training.far_share``) and named in the campaign's warnings when it is large."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from nimo.campaign.metrics import far_from_runs
from nimo.model.support import Support, far_share, rank_scaled
from workbench.cli import main
from workbench.exitstatus import FAR_WARN_SHARE, model_warnings

LEVELS = [list(range(11)), list(range(11))]
GRID = list(itertools.product(*LEVELS))


def test_runs_in_one_corner_leave_most_of_the_space_far() -> None:
    corner = [(0, 0), (0, 1), (1, 0), (1, 1)]
    share = far_share(LEVELS, corner, GRID)
    assert share is not None and share > 0.85  # all but the 13 within 2 steps of a run
    assert far_share(LEVELS, GRID, GRID) == 0.0  # every candidate measured
    spread = [(x, y) for x in (0, 5, 10) for y in (0, 5, 10)]
    spread_share = far_share(LEVELS, spread, GRID)
    assert spread_share is not None and spread_share < share
    assert far_share(LEVELS, [(5, 5)], GRID) is None  # no spacing from one run


NODES = [8.0, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60]  # a scale-out job's levels


def test_half_the_smallest_measured_capacity_is_as_far_off_as_twice_the_largest() -> None:
    """Off the levels the distance is by ratio where that is farther than the linear one:
    4 nodes (8 the smallest level) is a twelfth of the span away linearly but a third of it
    by ratio, as far as 120 is above 60; nothing on the levels moves."""
    support = Support([NODES], [[n] for n in NODES if n != 60][::2])
    below, above = support.distance(np.array([[4.0], [120.0]]))
    assert below > 0.3 and np.isclose(below, np.log(2) / np.log(60 / 8))  # 8 -> 4: halved
    assert above > below  # linearly 120 is a whole span above 60: the larger distance holds
    on_grid = np.array([[n] for n in NODES])
    assert np.array_equal(rank_scaled([NODES], on_grid, by_ratio=True),
                          rank_scaled([NODES], on_grid))
    factor, far = support.widening(np.array([[4.0], [2.0], [8.0], [30.0]]))
    assert far.tolist() == [True, True, False, False]
    assert factor[1] > factor[0] > 2.0 and factor[2] == 1.0


def test_a_non_positive_grid_or_value_is_measured_linearly_off_the_levels() -> None:
    latency = [[0.0, 5.0, 10.0]]  # a level at 0: no ratio
    assert rank_scaled(latency, np.array([[15.0]]), by_ratio=True)[0, 0] == 1.5
    share = [[0.1, 0.5, 1.0]]
    off = rank_scaled(share, np.array([[0.0], [-0.8], [0.05]]), by_ratio=True)[:, 0]
    assert off[0] == -0.1 / 0.9 and off[1] == -0.9 / 0.9  # x <= 0: linear only
    assert off[2] == -np.log(2) / np.log(10)  # 0.05: half the smallest share, by ratio


def test_the_share_is_estimated_on_a_seeded_subset_of_many_candidates() -> None:
    corner = [(0, 0), (0, 1), (1, 0), (1, 1)]
    whole = far_share(LEVELS, corner, GRID)
    part = far_share(LEVELS, corner, GRID, limit=60)
    assert whole is not None and part is not None
    assert part == far_share(LEVELS, corner, GRID, limit=60)  # deterministic
    assert abs(part - whole) < 0.1 and part * 60 == round(part * 60)


def test_only_a_readable_share_at_or_above_the_bar_is_warned_of() -> None:
    far = far_from_runs({"training": {"far_share": 0.25}, "support": [[1.0]]}, at_least=0.1)
    assert far is not None and far.warning().startswith("25% of the candidate assignments")
    assert "flagged far and their intervals widened" in far.warning()
    unbounded = far_from_runs({"training": {"far_share": 0.25}}, at_least=0.1)
    assert unbounded is not None and "guesses and are not flagged" in unbounded.warning()
    for record in ({"far_share": 0.05}, {"far_share": "lots"}, {"far_share": True},
                   {"far_share": float("nan")}, {"far_share": 7}, {}, None, [0.5]):
        assert far_from_runs({"training": record}, at_least=0.1) is None, record
    assert far_from_runs(None, at_least=0.1) is None


def test_the_campaign_warnings_name_the_far_share() -> None:
    model = {"attributes": [{"name": "cpu", "levels": [0.5, 1.0]}],
             "training": {"far_share": FAR_WARN_SHARE + 0.2, "measured_range": {"cpu": [0.5, 1]}}}
    its = [{"run": 1, "assignment": {"cpu": 0.5}, "status": "done", "purpose": "reference"}]
    (warning,) = model_warnings(model, its)
    assert "far from every run the model was fitted on" in warning
    model["training"]["far_share"] = FAR_WARN_SHARE / 2
    assert model_warnings(model, its) == ()


def write_app(data: Path) -> Path:
    """A 4 x 5 grid of cpu and mem with T = 10 / cpu + 40 / mem, as a replay CSV."""
    with data.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["cpu", "mem", "T"])
        for cpu, mem in itertools.product((0.25, 0.5, 0.75, 1.0), (1, 2, 4, 8, 16)):
            w.writerow([cpu, mem, 10.0 / cpu + 40.0 / mem])
    return data


def test_every_model_records_its_far_share(tmp_path) -> None:
    data = write_app(tmp_path / "app.csv")
    url = f"sqlite:///{tmp_path}/nimo.db"
    shares = {}
    for design in ("recommended", "paper-default"):
        assert main(["replay", str(data), "--store", url, "--name", design, "--quiet",
                     "--design", design, "--attributes", "cpu,mem", "--time-column", "T",
                     "--external-test", "2"]) in (0, 1)
        out = tmp_path / f"{design}.json"
        assert main(["model", "export", design, "--store", url, "-o", str(out)]) == 0
        shares[design] = json.loads(out.read_text())["training"].get("far_share")
    for share in shares.values():
        assert isinstance(share, float) and 0.0 <= share <= 1.0
    # one factor at a time around one reference leaves more of the grid far than
    # space-filling support points do
    assert shares["paper-default"] > shares["recommended"]


def test_a_loaded_model_reads_as_its_document_does() -> None:
    for support in ([[1.0]], None):
        loaded = SimpleNamespace(training={"far_share": 0.25}, support=support)
        doc = {"training": {"far_share": 0.25}, **({"support": support} if support else {})}
        from_loaded, from_doc = far_from_runs(loaded, 0.1), far_from_runs(doc, 0.1)
        assert from_loaded is not None and from_loaded == from_doc
        assert from_loaded.flagged is bool(support)
