"""Host rotation (issue 11, defect 11): a compute host whose runs fail for a host reason
leaves the rotation for a doubling backoff and is tried again after it; its run goes to a
healthy host, so the run budget is not spent on the broken one."""

from __future__ import annotations

import threading
import time

import pytest
from test_executor_runs import A, Lab, app_runs, runner_on

from nimo.records import RunOutcome, RunRequest, RunStatus
from workbench.errors import HostError
from workbench.executor.rotation import HostRotation
from workbench.executor.schedule import run_in_lanes
from workbench.inventory import Host


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_backoff_doubles_per_failure_in_a_row_up_to_its_cap_and_a_success_resets_it():
    clock = Clock()
    rot = HostRotation(["c1", "c2"], base_s=2.0, max_s=10.0, clock=clock)
    assert rot.wait_s("c1") == 0.0
    assert [rot.failed("c1", "down") for _ in range(5)] == [2.0, 4.0, 8.0, 10.0, 10.0]
    assert rot.wait_s("c1") == 10.0 and rot.wait_s("c2") == 0.0
    assert rot.benched() == {"c1": 10.0}
    clock.now += 10.0
    assert rot.wait_s("c1") == 0.0  # tried again after its backoff
    assert rot.failed("c1", "still down") == 10.0  # still failing: the long backoff
    rot.succeeded("c1")
    assert rot.wait_s("c1") == 0.0 and rot.failed("c1", "again") == 2.0


def test_a_host_whose_failure_took_long_sits_out_at_least_as_long():
    """A hung host fails a run only after its connects time out (3 x 10 s); with a 2 s
    backoff it took the next run again at once and stalled the campaign for 30 s per run
    while a healthy host stood idle."""
    rot = HostRotation(["c1", "c2"], base_s=2.0, max_s=60.0, clock=Clock())
    assert [rot.failed("c1", "no SSH banner", spent_s=31.0) for _ in range(5)] == [
        31.0, 62.0, 124.0, 248.0, 248.0]  # doubling up to 8 x the time a failure costs
    assert rot.failed("c2", "down", spent_s=0.5) == 2.0  # a quick failure: as before


def hosts(*names: str) -> list[Host]:
    return [Host(name=n, address=f"192.0.2.{i + 10}", role="compute", data_iface="data0",
                 data_address=f"10.9.1.{i + 10}") for i, n in enumerate(names)]


def _fake_run_on(broken: set[str], ran: list[tuple[str, int]]):
    lock = threading.Lock()

    def run_on(host: Host, request: RunRequest) -> tuple[RunOutcome, bool]:
        with lock:
            ran.append((host.name, request.run))
        time.sleep(0.01)
        if host.name in broken:
            return RunOutcome(request, RunStatus.FAILED, reason=f"{host.name}: link down",
                              host=host.name), True
        return RunOutcome(request, RunStatus.DONE, host=host.name), False
    return run_on


def test_runs_failed_by_a_broken_host_go_to_the_healthy_one():
    ran: list[tuple[str, int]] = []
    rot = HostRotation(["c1", "c2"], base_s=30.0)
    seen: list[RunOutcome] = []
    requests = [RunRequest(i, A, "train") for i in range(1, 6)]
    out = run_in_lanes(hosts("c1", "c2"), requests, _fake_run_on({"c1"}, ran), seen.append,
                       threading.Event(), rot)
    assert [o.request.run for o in out] == [1, 2, 3, 4, 5]
    assert all(o.status is RunStatus.DONE and o.host == "c2" for o in out) and len(seen) == 5
    assert [h for h, _ in ran].count("c1") == 1  # then it sat out its backoff
    assert rot.wait_s("c1") > 0


def test_a_run_every_host_failed_is_a_failed_run():
    ran: list[tuple[str, int]] = []
    rot = HostRotation(["c1", "c2"], base_s=0.05)
    out = run_in_lanes(hosts("c1", "c2"), [RunRequest(1, A, "train")],
                       _fake_run_on({"c1", "c2"}, ran), None, threading.Event(), rot)
    assert len(out) == 1 and out[0].status is RunStatus.FAILED
    assert sorted(h for h, _ in ran) == ["c1", "c2"]  # once on each host, then recorded


def test_a_single_run_is_not_bound_to_the_first_host():
    ran: list[tuple[str, int]] = []
    rot = HostRotation(["c1", "c2"], base_s=30.0)
    rot.failed("c1", "link down")
    out = run_in_lanes(hosts("c1", "c2"), [RunRequest(1, A, "reference")],
                       _fake_run_on(set(), ran), None, threading.Event(), rot)
    assert out[0].status is RunStatus.DONE and ran == [("c2", 1)]


def test_the_runner_keeps_a_host_with_a_broken_link_out_of_the_budget(tmp_path):
    """c1 cannot reach its storage host: every run it takes fails for a host reason; the
    failure budget (max_failures 2) is never reached because c2 runs them all."""
    lab = Lab()
    lab.host("c1").on(["hostname"], raises=HostError("c1: connection dropped"))
    policies = {"on_failure": "continue", "retries": 0, "max_failures": 2}
    with runner_on(tmp_path, lab, policies=policies) as runner:
        runner.rotation.base_s = 30.0
        out = runner.run_many([RunRequest(i, A, "train") for i in range(1, 7)])
        assert runner.failures == 0
    assert [o.request.run for o in out] == [1, 2, 3, 4, 5, 6]
    assert all(o.ok and o.host == "c2" for o in out)
    assert len(app_runs(lab.host("c2"))) == 6 and not app_runs(lab.host("c1"))


@pytest.mark.parametrize("stop_after", [0, 1])
def test_a_stoppable_runner_stops_and_aborts_its_inner_runner(stop_after):
    from nimo.campaign.runners import RunnerStopped, StoppableRunner
    from nimo.runner import RunnerBase

    class Inner(RunnerBase):
        aborted = False
        space = None  # type: ignore[assignment]

        def spec(self) -> dict:
            return {}

        def run(self, request):
            if stop_after:
                outer.stop()
            return RunOutcome(request, RunStatus.DONE)

        def abort(self) -> None:
            self.aborted = True

    inner = Inner()
    outer = StoppableRunner(inner)
    if not stop_after:
        outer.stop()
    with pytest.raises(RunnerStopped):
        outer.run_many([RunRequest(1, A, "train")])
    assert inner.aborted
