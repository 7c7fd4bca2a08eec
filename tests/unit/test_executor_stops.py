"""Fatal setup errors and the failure budget stop a live campaign at once (issue 10, item 4;
issue 11, item 13): never retried as transient, never spending the budget run by run."""

from __future__ import annotations

import time

import pytest
from test_executor_runs import A, Lab, app_runs, runner_on

from nimo.records import RunRequest, RunStatus
from workbench.emulation.cgroups import ENTER_SCRIPT
from workbench.errors import HostError, HostRefused, RemoteCommandFailed
from workbench.executor.stops import FailureBudgetExceeded, FatalSetupError, fatal_cause
from workbench.remote import CommandResult
from workbench.testing import FakeApp

RETRYING = {"on_failure": "continue", "retries": 3}


def attempts(lab: Lab) -> int:
    """Attempts made on lane c1 (each asks c1's name once, failing, in its preparation)."""
    return len(lab.host("c1").ran(["hostname"]))


@pytest.mark.parametrize("refusal", [
    "c1: host key mismatch for 192.0.2.11 (got ssh-ed25519 0011...)",
    "c1: key /k rejected for root@192.0.2.11 (Authentication failed.)",
    "c1: known_hosts file /nowhere/known_hosts not found",
])
def test_a_refused_host_stops_the_batch_without_retry(tmp_path, refusal):
    lab = Lab()
    c1 = lab.host("c1")
    c1.on(["hostname"], raises=HostRefused(refusal))
    c2 = lab.host("c2")
    run_g = c2.rules[-1].respond
    c2.on(lambda argv: argv[:3] == ("sh", "-c", ENTER_SCRIPT),
          call=lambda argv: (time.sleep(0.3), run_g(argv))[1])  # slower than c1's refusal
    with runner_on(tmp_path, lab, policies=RETRYING) as runner:
        with pytest.raises(FatalSetupError, match="run 1 on c1") as err:
            runner.run(RunRequest(1, A, "train"))
        assert refusal in str(err.value)
        assert attempts(lab) == 1  # not retried (policies.retries is 3)
        seen = []
        with pytest.raises(FatalSetupError, match="on c1"):
            runner.run_many([RunRequest(i, A, "train") for i in range(2, 9)], seen.append)
    # the refused run is not recorded as failed; c2 finished the runs it had started only
    assert all(o.host == "c2" and o.ok for o in seen) and len(seen) <= 1
    assert len(app_runs(lab.host("c2"))) == len(seen)


def test_a_dropped_connection_is_still_transient(tmp_path):
    """Retried on c1 (policies.retries), then run on c2: a host failure is not a failed run
    while another host can run it."""
    lab = Lab()
    c1 = lab.host("c1")
    c1.on(["hostname"], raises=HostError("c1: connection dropped"))
    with runner_on(tmp_path, lab, policies=RETRYING) as runner:
        out = runner.run(RunRequest(1, A, "train"))
        assert runner.rotation.wait_s("c1") > 0  # c1 sits out a backoff
    assert out.ok and out.host == "c2"
    assert attempts(lab) >= 2  # c1 was tried again (policies.retries) before c2 ran it


def test_a_missing_tool_is_fatal(tmp_path):
    lab = Lab()
    lab.host("c1").on(r"^cat /proc/mounts", exit_code=127, stderr="sh: 1: cat: not found")
    with (runner_on(tmp_path, lab, policies=RETRYING) as runner,
          pytest.raises(FatalSetupError, match=r"not installed \(`cat`, exit 127\)")):
        runner.run(RunRequest(1, A, "train"))


def test_max_failures_stops_instead_of_recording_more_failures(tmp_path):
    lab = Lab(FakeApp(exit_code=1))
    policies = {"on_failure": "continue", "retries": 0, "max_failures": 3}
    seen = []
    with runner_on(tmp_path, lab, policies=policies) as runner:
        first = runner.run_many([RunRequest(1, A, "train"), RunRequest(2, A, "train")],
                                seen.append)
        assert [o.status for o in first] == [RunStatus.FAILED] * 2  # within the budget
        with pytest.raises(FailureBudgetExceeded, match=r"3 failed runs reached "
                           r"policies.max_failures=3"):
            runner.run_many([RunRequest(i, A, "train") for i in range(3, 20)], seen.append)
    # the third failure stops it: at most one more run (the other lane's) was under way
    assert 3 <= len(seen) <= 4
    assert sum(len(app_runs(lab.host(h))) for h in ("c1", "c2")) == len(seen)


def test_fatal_cause_follows_the_chain():
    res = CommandResult("c1", ("tshark", "-v"), 127, "", "tshark: not found", 0.0)
    try:
        try:
            raise RemoteCommandFailed(res)
        except RemoteCommandFailed as e:
            raise ValueError("monitor failed") from e
    except ValueError as wrapped:
        assert "`tshark`, exit 127" in (fatal_cause(wrapped) or "")
    other = CommandResult("c1", ("tc", "qdisc"), 2, "", "RTNETLINK answers: busy", 0.0)
    assert fatal_cause(RemoteCommandFailed(other)) is None
    assert fatal_cause(HostError("c1: connection dropped")) is None


def test_g_exiting_127_is_a_failed_run_not_a_fatal_error(tmp_path):
    lab = Lab()
    lab.host("c1").on(lambda argv: argv[:3] == ("sh", "-c", ENTER_SCRIPT),
                      stdout="", stderr="fake-app: not found", exit_code=127)
    with runner_on(tmp_path, lab) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert out.status is RunStatus.FAILED
