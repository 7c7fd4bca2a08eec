"""The runner contract: the registry that rebuilds a stored campaign's runner, and the
wrappers that forward the contract to the runner they wrap."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_fakes import FakeRunner, HostBoard, HostRunner

from nimo.campaign import ResumingRunner, RetryingRunner
from nimo.errors import ConfigError, StoreError
from nimo.records import CampaignInfo, CampaignKind, CampaignStatus, RunRequest
from nimo.runner import Runner, RunnerWrapper
from nimo.store import open_store
from workbench.campaigns import launch_replay
from workbench.designs import load_design
from workbench.replay import ReplayOptions, ReplayRunner
from workbench.runners import RUNNERS, open_runner_for, runner_entry

DATA = Path(__file__).resolve().parents[2] / "datasets" / "synthetic" / "cpu_bound.csv"


def _info(kind: str, spec: dict) -> CampaignInfo:
    return CampaignInfo(name="c", kind=kind, status=CampaignStatus.CREATED,  # type: ignore
                        design={}, spec=spec, seed=0)


def test_every_campaign_kind_has_a_runner() -> None:
    assert set(RUNNERS) == set(CampaignKind)


def test_an_unknown_kind_is_one_line_listing_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as e:
        open_runner_for(_info("slurm", {}))
    assert str(e.value) == "no runner for campaign kind 'slurm' (valid: replay, live)"


def test_a_campaign_stored_without_its_runner_spec_cannot_be_rebuilt() -> None:
    with pytest.raises(StoreError, match="replay campaign 'c' was stored without its runner"):
        open_runner_for(_info("replay", {"external": []}))
    with pytest.raises(StoreError, match="runner's inventory"):
        open_runner_for(_info("live", {"holdout": 2}))


def test_a_replay_campaign_rebuilt_from_its_spec_gives_the_same_runs(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/r.db"
    runner = ReplayRunner.open(ReplayOptions(str(DATA), external_test=10, seed=4))
    launch_replay(runner, design=load_design("paper-default"), seed=4, store_url=url,
                  name="r", progress=False)
    with open_store(url) as store:
        info, runs = store.campaign("r"), store.runs("r")
    assert info.spec["dataset"] == runner.spec() and info.spec["dataset"]["seed"] == 4
    rebuilt = open_runner_for(info)
    assert isinstance(rebuilt, ReplayRunner) and isinstance(rebuilt, Runner)
    assert rebuilt.space.candidates == runner.space.candidates and rebuilt.kind == runner.kind
    assert rebuilt.external == runner.external and len(runs) > 10
    again = rebuilt.run_many([r.request for r in runs])
    assert [(o.request.run, o.sample.T) for o in again] == [
        (r.run, r.sample.T) for r in runs]


def test_replay_options_are_the_stored_spec() -> None:
    options = ReplayOptions(str(DATA), attributes="cpu_mhz, mem_mb", where=[["a", "1"]])
    spec = options.to_spec()
    assert spec == {"path": str(DATA), "attributes": ["cpu_mhz", "mem_mb"], "time_column": "T",
                    "where": [["a", "1"]], "external_test": None, "seed": 0, "load": [],
                    "calibration_split": 0, "max_levels": 50, "max_assignments": 50000}
    assert ReplayOptions.from_spec(spec) == options
    with pytest.raises(ConfigError, match="--attributes . , . has an empty name"):
        ReplayOptions(str(DATA), attributes=" , ")
    assert runner_entry("replay").stored_spec(spec) == {"dataset": spec}
    assert runner_entry("live").stored_spec({"inventory": "/i.yaml"}) == {"inventory": "/i.yaml"}


def test_wrappers_forward_the_contract() -> None:
    inner = HostRunner("c", ["h1", "h2"], HostBoard(), delay_s=0)
    inner.profiles = {"cpu": 0.5}
    for wrapper in (RetryingRunner(inner), ResumingRunner({}, inner), RunnerWrapper(inner)):
        assert isinstance(wrapper, Runner)
        assert wrapper.hosts == ("h1", "h2") and wrapper.kind == "occupancy"
        assert wrapper.space is inner.space and wrapper.spec() == inner.spec()
        assert wrapper.profiles == {"cpu": 0.5}
    RunnerWrapper(inner).profiles = {}
    assert inner.profiles == {}


def test_runner_defaults_and_retry_policy() -> None:
    runner = FakeRunner()
    assert (runner.kind, runner.hosts, runner.profiles) == ("occupancy", (), None)
    with pytest.raises(ConfigError, match="attempts must be >= 1"):
        RetryingRunner(runner, attempts=0)
    flaky = RetryingRunner(FakeRunner(fail=[1]), attempts=3)
    out = flaky.run(RunRequest(1, {"cpu": 1.0, "lat": 0.0}, "train"))
    assert out.reason == "host vanished" and flaky.retried == [1, 1]
    assert flaky.inner.ran == [1, 1, 1]  # type: ignore[attr-defined]
