"""A run that moves no data is a valid sample (o_n = o_d = 0, one unit of work), and the
planner and predictors learn from such samples without log(0) or a division by zero."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from campaign_fakes import FormulaRunner

from nimo.campaign import Campaign
from nimo.campaign.runners import ResumingRunner
from nimo.planner import make_planner
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from nimo.records.samples import NO_DATA_UNIT, occupancies_without_data
from nimo.space import Attribute, ResourceSpace
from workbench.collector import RunMeasurements, collect

SPACE = ResourceSpace((Attribute("cpu_share", (0.25, 0.5, 0.75, 1.0)),
                       Attribute("rate_mbit", (20.0, 50.0, 100.0)),
                       Attribute("memory_mb", (64.0, 128.0, 256.0))))


def no_data_sample(a) -> Sample:
    T = 2.0 / a["cpu_share"] + 0.3  # compute-bound: the network and memory do not matter
    m = RunMeasurements(T_s=T, cpu_s=T * a["cpu_share"] * 0.9, cpus=a["cpu_share"],
                        data_bytes=0, method="sshfs")
    return collect(a, m)


def test_a_run_without_data_is_a_sample_with_zero_io_occupancies():
    s = no_data_sample({"cpu_share": 0.5, "rate_mbit": 20.0, "memory_mb": 64.0})
    assert s.has_occupancies
    assert s.o_n == 0.0 and s.o_d == 0.0
    assert s.D == NO_DATA_UNIT and s.o_a == pytest.approx(s.T)
    assert s.D * (s.o_a + s.o_n + s.o_d) == pytest.approx(s.T)
    assert s.meta["data_bytes"] == 0 and s.meta["occupancies"].startswith("no data flow")


def test_occupancies_without_data_refuse_a_non_positive_time():
    from nimo.errors import DataError

    with pytest.raises(DataError, match="T > 0"):
        occupancies_without_data(0.0)


def test_a_stored_sample_without_occupancies_is_completed_on_resume():
    """A campaign that crashed on such a sample (older versions) resumes: the stored
    sample gets its occupancies when it is re-told."""
    a = {"cpu_share": 0.5, "rate_mbit": 20.0, "memory_mb": 64.0}
    old = Sample(a, T=3.0, U=0.9, meta={"data_bytes": 0, "occupancies": "unavailable"})
    req = RunRequest(1, a, "reference")
    stored = {1: RunOutcome(req, RunStatus.DONE, old)}
    told = ResumingRunner(stored, no_data_runner()).run(req).sample
    assert told is not None and told.has_occupancies and told.o_a == pytest.approx(3.0)
    unknown = Sample(a, T=3.0, meta={})  # no record of the data moved: left as it was
    assert unknown.with_no_data_occupancies() is unknown


def no_data_runner() -> FormulaRunner:
    return FormulaRunner(SPACE, no_data_sample, kind="occupancy")


@pytest.mark.parametrize("design", ["recommended", "paper-default"])
def test_the_planner_learns_from_runs_without_data(design):
    from workbench.designs import load_design

    spec = load_design(design)
    planner = make_planner(SPACE, spec, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log(0), x/0 in numpy warn: make them fail
        with np.errstate(all="raise"):
            result = Campaign(planner, no_data_runner(), max_failed_in_row=None).run()
    assert result.model is not None
    assert all(r.status == "done" for r in result.iterations)
    a = {"cpu_share": 0.25, "rate_mbit": 100.0, "memory_mb": 256.0}
    predicted = float(result.model.predict(a))
    assert predicted == pytest.approx(2.0 / 0.25 + 0.3, rel=0.1)
