"""``nimo serve``'s scheduler: host leases, retries and restart, with replay-like fakes."""

from __future__ import annotations

import time

import pytest
from campaign_fakes import FakePlanner, FakeRunner, HostBoard, HostRunner

import nimo.campaign.lifecycle as lifecycle
from nimo.campaign import Campaign, StoreRecorder
from nimo.records import RunStatus
from nimo.store import open_store
from workbench.service import Service


@pytest.fixture(autouse=True)
def fake_planner(monkeypatch):
    monkeypatch.setattr(lifecycle, "build_planner",
                        lambda space, design, seed, *kind: FakePlanner(seed, budget=8))


def _queue(store, name: str, hosts: list[str], seed: int) -> None:
    store.create_campaign(name, "replay", design={}, seed=seed, status="queued",
                          spec={"hosts": hosts, "submitted": True})


def _wait_idle(service: Service, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not service.idle():
        assert time.monotonic() < deadline, "service did not finish its queue"
        time.sleep(0.05)


def _overlaps(log) -> list[tuple[str, str, str]]:
    bad = []
    for i, a in enumerate(log):
        for b in log[i + 1:]:
            if a.host == b.host and a.campaign != b.campaign:
                a_end = a.released_at or float("inf")
                b_end = b.released_at or float("inf")
                if a.acquired_at < b_end and b.acquired_at < a_end:
                    bad.append((a.host, a.campaign, b.campaign))
    return bad


def test_two_campaigns_over_three_hosts_never_share_a_host(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/serve.db"
    board = HostBoard()
    with open_store(url) as store:
        _queue(store, "left", ["h1", "h2"], seed=1)
        _queue(store, "right", ["h2", "h3"], seed=2)
        _queue(store, "solo", ["h1"], seed=3)
    service = Service(url, poll_s=0.05, workers=3, runner_factory=lambda info: HostRunner(
        info.name, info.spec["hosts"], board, delay_s=0.02, flaky=[2]))
    service.start()
    try:
        _wait_idle(service)
    finally:
        service.shutdown()
    assert board.seen == {"left", "right", "solo"}
    assert board.clashes == []
    with open_store(url) as store:
        assert [c.status for c in store.campaigns()] == ["done", "done", "done"]
        log = store.lease_log()
        assert _overlaps(log) == []
        assert {lg.host for lg in log} == {"h1", "h2", "h3"}
        assert store.leases() == []
        for name in ("left", "right", "solo"):
            runs = store.runs(name)
            assert [r.run for r in runs] == list(range(1, 9))
            assert all(r.status is RunStatus.DONE for r in runs)  # run 2 failed once, retried


def test_restart_picks_up_what_a_dead_service_left(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/serve.db"
    import socket

    dead_owner = f"{socket.gethostname()}:999999999:gone"
    with open_store(url) as store:
        _queue(store, "crashed", ["h1"], seed=4)
        _queue(store, "waiting", ["h1"], seed=5)
        assert store.acquire_hosts("crashed", ["h1"], dead_owner)
        store.set_status("crashed", "running")
        with pytest.raises(KeyboardInterrupt):
            Campaign(FakePlanner(4, budget=8), FakeRunner(crash_at=5),
                     observers=[StoreRecorder(store, "crashed")]).run()
        store.set_status("crashed", "running")  # as a SIGKILL would leave it
        assert sorted(store.outcomes("crashed")) == [1, 2, 3, 4]
    board = HostBoard()
    runners: dict[str, HostRunner] = {}

    def factory(info):
        runners[info.name] = HostRunner(info.name, info.spec["hosts"], board, delay_s=0.01)
        return runners[info.name]

    service = Service(url, poll_s=0.05, runner_factory=factory)
    service.start()
    try:
        _wait_idle(service)
    finally:
        service.shutdown()
    assert runners["crashed"].ran == [5, 6, 7, 8]  # nothing finished was run again
    assert board.clashes == []
    with open_store(url) as store:
        assert [c.status for c in store.campaigns()] == ["done", "done"]
        assert [run for run, _ in store.samples("crashed")] == list(range(1, 9))
        assert store.runs("crashed")[4].attempts == 2
        assert store.leases() == []


def _failed_by_factory(tmp_path, name: str, error: Exception, attempts: int):
    """Queue campaign ``name`` on a service whose runner factory always raises ``error``;
    the campaign's stored info once the service is idle (no lease left)."""
    url = f"sqlite:///{tmp_path}/serve.db"
    with open_store(url) as store:
        _queue(store, name, ["h9"], seed=1)

    def factory(info):
        raise error

    service = Service(url, poll_s=0.05, campaign_attempts=attempts, runner_factory=factory)
    service.start()
    try:
        _wait_idle(service)
    finally:
        service.shutdown()
    with open_store(url) as store:
        assert store.leases() == []
        return store.campaign(name)


def test_a_campaign_that_keeps_failing_is_marked_failed(tmp_path) -> None:
    info = _failed_by_factory(tmp_path, "broken", RuntimeError("inventory host h9 unreachable"),
                              attempts=2)
    assert info.status == "failed" and info.spec["service_attempts"] == 2
    assert info.stopped_because == "RuntimeError: inventory host h9 unreachable"


def test_a_fatal_setup_error_fails_the_campaign_without_requeueing(tmp_path) -> None:
    from workbench.executor.stops import FatalSetupError

    info = _failed_by_factory(tmp_path, "refused",
                              FatalSetupError("h9: host key mismatch for 192.0.2.9"), attempts=3)
    assert info.status == "failed" and info.spec["service_attempts"] == 1
    assert info.stopped_because == "FatalSetupError: h9: host key mismatch for 192.0.2.9"


def test_remeasure_empties_running_campaigns_profile_caches(tmp_path) -> None:
    class Cache(dict):
        pass

    class LiveRunner:
        profiles = Cache(cpu=0.5)

    runner = LiveRunner()
    service = Service(f"sqlite:///{tmp_path}/p.db")
    try:
        service._runners["live"] = runner
        old = runner.profiles
        service.remeasure_profiles()
        assert isinstance(runner.profiles, Cache) and runner.profiles == {} and old == {"cpu": 0.5}
    finally:
        service.shutdown()
