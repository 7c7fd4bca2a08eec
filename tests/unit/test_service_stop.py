"""``nimo serve`` stopped (Ctrl-C, SIGTERM, SIGHUP: ``Service.shutdown``) while a campaign
runs: the campaign's runs are stopped, the runs in flight marked interrupted, the campaign
queued again, and the next service finishes it without repeating a finished run."""

from __future__ import annotations

import time

import pytest
from campaign_fakes import FakePlanner, HostBoard, HostRunner

import nimo.campaign.lifecycle as lifecycle
from nimo.records import RunStatus
from nimo.store import open_store
from workbench.service import Service


@pytest.fixture(autouse=True)
def fake_planner(monkeypatch):
    monkeypatch.setattr(lifecycle, "build_planner",
                        lambda space, design, seed, *kind: FakePlanner(seed, budget=8))


def test_a_stopped_service_queues_its_running_campaign_again(tmp_path):
    url = f"sqlite:///{tmp_path}/stop.db"
    with open_store(url) as store:
        store.create_campaign("slow", "replay", design={}, seed=1, status="queued",
                              spec={"hosts": ["h1"], "submitted": True})
    runners: list[HostRunner] = []

    def factory(info):
        runners.append(HostRunner(info.name, ["h1"], HostBoard(), delay_s=0.3))
        return runners[-1]

    service = Service(url, poll_s=0.05, workers=1, runner_factory=factory)
    service.start()
    deadline = time.monotonic() + 20
    while not runners or len(runners[0].ran) < 2:
        assert time.monotonic() < deadline, "the campaign never ran"
        time.sleep(0.05)
    service.shutdown()
    with open_store(url) as store:
        info = store.campaign("slow")
        runs = store.runs("slow")
        assert info.status == "queued" and "service stopped" in (info.stopped_because or "")
        assert not [r for r in runs if r.status is RunStatus.QUEUED]  # none left in flight
        done_before = {r.run for r in runs if r.status is RunStatus.DONE}
    assert 0 < len(done_before) < 8
    again = Service(url, poll_s=0.05, workers=1, runner_factory=factory)
    again.start()
    try:
        deadline = time.monotonic() + 30
        while not again.idle():
            assert time.monotonic() < deadline, "the next service did not finish it"
            time.sleep(0.05)
    finally:
        again.shutdown()
    assert not set(runners[-1].ran) & done_before  # no finished run repeated
    with open_store(url) as store:
        assert store.campaign("slow").status == "done"
