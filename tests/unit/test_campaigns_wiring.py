"""``workbench.campaigns``: holdout, live resume clean-up, and refusing a live owner."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from campaign_fakes import SPACE, FakePlanner, FakeRunner, true_T

import nimo.campaign.lifecycle as lifecycle
import workbench.campaigns as campaigns
from nimo.campaign import Campaign, StoreRecorder
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from nimo.store import open_store
from nimo.store.types import Owner
from workbench.ownership import Busy

EXAMPLE = str(Path(__file__).resolve().parents[2] / "inventories" / "example.yaml")


@pytest.fixture(autouse=True)
def fake_planner(monkeypatch):
    monkeypatch.setattr(lifecycle, "build_planner",
                        lambda space, design, seed, *kind: FakePlanner(seed, budget=6))


class OverheadRunner(FakeRunner):
    def run(self, request: RunRequest) -> RunOutcome:
        self.ran.append(request.run)
        a = dict(request.assignment)
        return RunOutcome(request, RunStatus.DONE, Sample(a, T=true_T(a)), overhead_s=4.0)


def test_holdout_runs_unused_assignments_and_reports_them(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/h.db"
    with open_store(url) as store:
        info = store.create_campaign("h", "live", design={}, seed=9,
                                     spec={"inventory": "x.yaml", "holdout": 4})
        runner = OverheadRunner()
        result = lifecycle.execute(store, info, runner)
        runs = store.runs("h")
    final = result.to_dict()["final"]
    learned = [r for r in runs if r.purpose not in ("holdout", "recheck")]
    held = [r for r in runs if r.purpose == "holdout"]
    (recheck,) = [r for r in runs if r.purpose == "recheck"]
    assert len(held) == 4 and final["holdout_runs"] == 4
    assert [r.run for r in held] == list(range(len(learned) + 1, len(learned) + 5))
    # last, the first learning run's assignment again (the fake planner asks no reference)
    assert recheck.run == len(learned) + 5 and recheck.assignment == learned[0].assignment
    assert final["recheck_drift_pct"] == pytest.approx(0.0, abs=1e-9)
    assert not {tuple(r.assignment.items()) for r in held} & {
        tuple(r.assignment.items()) for r in learned}
    assert all(tuple(r.assignment.values()) in SPACE for r in held)
    assert final["holdout_mape_pct"] == pytest.approx(0.0, abs=1e-6)  # the fake's exact form
    assert final["overhead_s_per_run"] == pytest.approx(4.0)
    assert runner.ran == [r.run for r in runs]


class SpeedingUp(FakeRunner):
    """Every run from ``after`` on takes 20% less time: hosts that drifted."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def run(self, request: RunRequest) -> RunOutcome:
        a = dict(request.assignment)
        T = true_T(a) * (0.8 if request.run >= self.after else 1.0)
        return RunOutcome(request, RunStatus.DONE, Sample(a, T=T))


def test_the_recheck_tells_a_drift_of_the_hosts_from_a_model_that_is_off(tmp_path) -> None:
    from workbench.exitstatus import drift_confirmed, drift_warning

    with open_store(f"sqlite:///{tmp_path}/d.db") as store:
        info = store.create_campaign("d", "live", design={}, seed=9,
                                     spec={"inventory": "x.yaml", "holdout": 6})
        final = lifecycle.execute(store, info, SpeedingUp(after=7)).to_dict()["final"]
    assert final["holdout_shift_pct"] == pytest.approx(-20.0)
    assert final["recheck_drift_pct"] == pytest.approx(-20.0)
    assert drift_confirmed(final)
    (line,) = drift_warning(final)
    assert "re-run last, took 20% less time than while learning" in line
    assert "changed during the campaign (drift)" in line


class DirtyCrash(FakeRunner):
    """Interrupted while tearing down (a second Ctrl-C): the hosts may hold leftovers."""

    def run(self, request):
        try:
            return super().run(request)
        except KeyboardInterrupt as e:
            e.hosts_dirty = True
            raise


def test_a_torn_down_interrupt_marks_the_runs_in_flight_interrupted(tmp_path, monkeypatch):
    """Ctrl-C, SIGTERM or SIGHUP whose teardown ended: the runs in flight are interrupted at
    once, and a resume has no host to clean."""
    url = f"sqlite:///{tmp_path}/t.db"
    cleaned: list[str] = []
    from workbench import clean

    monkeypatch.setattr(clean, "clean_inventory", lambda path: cleaned.append(path) or {})
    with open_store(url) as store:
        store.create_campaign("t", "live", design={}, seed=2, spec={"inventory": EXAMPLE})
        with pytest.raises(KeyboardInterrupt):
            Campaign(FakePlanner(2, budget=6), FakeRunner(crash_at=4),
                     observers=[StoreRecorder(store, "t")]).run()
        assert [r.run for r in store.runs("t") if r.status == "interrupted"] == [4]
    again = FakeRunner()
    campaigns.resume("t", store_url=url, progress=False, runner_factory=lambda info: again)
    assert cleaned == [] and again.ran == [4, 5, 6]


def test_resume_cleans_when_the_store_still_records_objects_of_an_interrupt(tmp_path,
                                                                            monkeypatch):
    """An interrupt whose teardown a hung host cut short (workbench.remote.liveness) leaves
    the campaign interrupted, no run in flight, and the run's objects recorded: the resume
    cleans the hosts first (it had only after a crash)."""
    from nimo.store.objects import HostObject
    from workbench import clean

    url = f"sqlite:///{tmp_path}/o.db"
    cleaned: list[str] = []
    monkeypatch.setattr(clean, "clean_inventory",
                        lambda path, campaign, store: cleaned.append(campaign) or {})
    with open_store(url) as store:
        store.create_campaign("o", "live", design={}, seed=2, spec={"inventory": EXAMPLE})
        with pytest.raises(KeyboardInterrupt):
            Campaign(FakePlanner(2, budget=6), FakeRunner(crash_at=4),
                     observers=[StoreRecorder(store, "o")]).run()
        store.record_host_object(HostObject("o", "c1-r4-0-ab", "compute1", "dir", "/tmp/x"))
    campaigns.resume("o", store_url=url, progress=False, runner_factory=lambda i: FakeRunner())
    assert cleaned == ["o"]


def test_live_resume_cleans_hosts_and_reruns_the_interrupted_run(tmp_path, monkeypatch) -> None:
    url = f"sqlite:///{tmp_path}/l.db"
    cleaned: list[str] = []
    from workbench import clean

    monkeypatch.setattr(clean, "clean_inventory",  # only this campaign's objects
                        lambda path, campaign, store: cleaned.append(f"{path}:{campaign}")
                        or {"h1": object()})
    with open_store(url) as store:
        store.create_campaign("l", "live", design={}, seed=2, spec={"inventory": EXAMPLE})
        with pytest.raises(KeyboardInterrupt):
            Campaign(FakePlanner(2, budget=6), DirtyCrash(crash_at=4),
                     observers=[StoreRecorder(store, "l")]).run()
    again = FakeRunner()
    result = campaigns.resume("l", store_url=url, progress=False,
                              runner_factory=lambda info: again)
    assert cleaned == [f"{EXAMPLE}:l"]
    assert again.ran == [4, 5, 6]
    assert len(result.iterations) == 6
    with open_store(url) as store:
        runs = store.runs("l")
        assert [r.attempts for r in runs] == [1, 1, 1, 2, 1, 1]
        assert store.campaign("l").status == "done"


def test_resume_refuses_a_campaign_another_live_process_owns(tmp_path, monkeypatch) -> None:
    url = f"sqlite:///{tmp_path}/r.db"
    with open_store(url) as store:
        store.create_campaign("r", "replay", design={}, spec={}, status="running")
        other = store.register_owner(Owner("elsewhere:77:x", "elsewhere", 77))
        assert store.claim_campaign("r", other.id, stale_s=60) is None
    again = FakeRunner()
    with pytest.raises(Busy, match="run by another process: host elsewhere pid 77 since"):
        campaigns.resume("r", store_url=url, progress=False, runner_factory=lambda info: again)
    assert again.ran == []
    monkeypatch.setenv("NIMO_HEARTBEAT_S", "0.05")
    # stale after 1 s: with 0.2 s, a heartbeat thread starved that long on a busy CI machine
    # let the resumed campaign reap its own ownership and interrupt the test run
    monkeypatch.setenv("NIMO_STALE_S", "1.0")
    time.sleep(1.2)  # the other owner's heartbeat is now stale: resume takes over
    campaigns.resume("r", store_url=url, progress=False, runner_factory=lambda info: again)
    assert again.ran == [1, 2, 3, 4, 5, 6]
    with open_store(url) as store:
        assert store.campaign_owner("r") is None and store.leases() == []


def test_resume_refuses_hosts_leased_to_another_campaign(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/h.db"
    with open_store(url) as store:
        store.create_campaign("mine", "replay", design={}, spec={"hosts": ["h1", "h2"]})
        other = store.register_owner(Owner("svc:1:x", "svc", 1))
        assert store.acquire_hosts("theirs", ["h2"], other.id)
    again = FakeRunner()
    with pytest.raises(Busy, match="host h2 is leased to campaign 'theirs'"):
        campaigns.resume("mine", store_url=url, progress=False,
                         runner_factory=lambda info: again)
    assert again.ran == []
    with open_store(url) as store:
        assert [(lease.host, lease.campaign) for lease in store.leases()] == [("h2", "theirs")]


def test_a_campaign_stopped_by_a_broken_workbench_resumes_once_fixed(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/b.db"
    with open_store(url) as store:
        info = store.create_campaign("b", "replay", design={}, seed=3, spec={})
        broken = lifecycle.execute(store, info, FakeRunner(fail=range(3, 100)))
        assert broken.stopped_because.startswith("10 failed runs in a row")
        assert store.campaign("b").status == "failed"
        assert sorted(store.outcomes("b")) == [1, 2]  # the failed streak is open again
    fixed = FakeRunner()
    result = campaigns.resume("b", store_url=url, progress=False,
                              runner_factory=lambda info: fixed)
    assert fixed.ran[:2] == [3, 4] and result.stopped_because == "budget"
    with open_store(url) as store:
        assert store.campaign("b").status == "done"
        assert len(store.samples("b")) == 6


class CalibratedLine:
    """A model that records what its intervals were calibrated on."""

    def __init__(self, on: tuple = ()) -> None:
        self.on = on

    def calibrated_on(self, cases, method):
        return CalibratedLine((*self.on, (method, [T for _, T in cases])))

    def to_dict(self) -> dict:
        return {"on": [list(x) for x in self.on]}


def test_calibration_never_uses_the_external_test_set() -> None:
    from nimo.campaign import CampaignResult, with_calibrated_model

    result = CampaignResult("c", {}, (), None, model=CalibratedLine())
    held, calib = [({"cpu": 1.0}, 5.0)], [({"cpu": 2.0}, 7.0)]
    assert with_calibrated_model(result, held, calib).model.on == (
        ("holdout-studentized", [5.0]),)
    assert with_calibrated_model(result, [], calib).model.on == (("holdout-studentized", [7.0]),)
    assert with_calibrated_model(result, [], []) is result   # keeps its own (LOO) calibration


def test_a_replay_campaign_calibrates_on_its_split_and_scores_on_external(monkeypatch) -> None:
    external = [[SPACE.as_dict(c), true_T(SPACE.as_dict(c))] for c in SPACE.candidates[:4]]
    calib = [(SPACE.as_dict(c), 1000.0 + i) for i, c in enumerate(SPACE.candidates[-3:])]
    seen: list = []
    from nimo.campaign import holdout

    real = holdout.with_calibrated_model
    monkeypatch.setattr(lifecycle, "with_calibrated_model",
                        lambda r, h, c: seen.append((h, c)) or real(r, h, c))
    spec = {"external": external, "calibration": [[a, T] for a, T in calib]}  # as stored
    info = lifecycle.new_campaign(None, "replay", None, None, 1, spec)
    result = lifecycle.execute(None, info, FakeRunner())
    assert seen == [([], calib)]
    final = result.to_dict()["final"]
    assert final["external_mape_pct"] is not None and "external_coverage_90" in final


def test_an_interrupt_while_the_result_is_made_marks_the_campaign_interrupted(
        tmp_path, monkeypatch) -> None:
    """A signal after the last run, while the loop makes its result or the model is handed
    over: the store says interrupted, never running or done, and a resume finishes it."""
    url = f"sqlite:///{tmp_path}/end.db"

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    for where in ("result", "handover"):
        name = f"end-{where}"
        with open_store(url) as store:
            info = store.create_campaign(name, "replay", design={}, seed=3, spec={})
            with monkeypatch.context() as patch:
                if where == "result":
                    patch.setattr(Campaign, "result", interrupt)
                else:
                    patch.setattr(lifecycle, "with_family", interrupt)
                with pytest.raises(KeyboardInterrupt):
                    lifecycle.execute(store, info, FakeRunner())
            stored = store.campaign(name)
            assert stored.status == "interrupted", where
        result = campaigns.resume(name, store_url=url, progress=False,
                                  runner_factory=lambda info: FakeRunner())
        assert result.stopped_because == "budget"
        with open_store(url) as store:
            assert store.campaign(name).status == "done"


def test_a_malformed_store_url_is_named_before_the_hosts_are_checked(monkeypatch) -> None:
    """The doctor can take seconds per unreachable host; a typo in --store is said first."""
    from nimo.errors import StoreError

    checked: list[str] = []
    monkeypatch.setattr(campaigns, "preflight", lambda path: checked.append(str(path)))
    with pytest.raises(StoreError, match="port 'x' is not a number"):
        campaigns.launch_live(EXAMPLE, store_url="postgresql://u@h:x/db", name="m",
                              doctor=True, progress=False)
    assert checked == []


def test_a_holdout_as_large_as_the_space_is_refused_before_anything_is_stored(tmp_path):
    from nimo.errors import ConfigError

    url = f"sqlite:///{tmp_path}/h.db"
    with pytest.raises(ConfigError, match=r"--holdout 100000: .* has \d+ assignments"):
        campaigns.launch_live(EXAMPLE, holdout=100000, store_url=url, name="big",
                              progress=False)
    assert not (tmp_path / "h.db").exists()
