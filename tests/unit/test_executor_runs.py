"""The executor's logic on fake hosts (workbench.testing): no root, no SSH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from nimo.records import RunRequest, RunStatus
from nimo.runner import Runner
from workbench.emulation.cgroups import ENTER_SCRIPT
from workbench.emulation.datapath import QDISC_HANDLE
from workbench.errors import CommandTimeout, HostError
from workbench.executor import SSHRunner, open_runner
from workbench.executor.stops import FailureBudgetExceeded
from workbench.profiles import ProfileCache
from workbench.remote import CommandResult
from workbench.testing import FakeApp, FakeHost

A = {"cpu_share": 0.5, "memory_mb": 96.0}


def write_inventory(tmp_path: Path, **changes: object) -> Path:
    host = {"user": "root", "port": 22}
    doc = {
        "version": 1, "name": "fake",
        "hosts": [
            {**host, "name": "c1", "address": "192.0.2.11", "role": "compute",
             "data_iface": "data0", "data_address": "10.9.1.11", "peer": "s1",
             "peer_iface": "data0"},
            {**host, "name": "c2", "address": "192.0.2.13", "role": "compute",
             "data_iface": "data0", "data_address": "10.9.2.13", "peer": "s1",
             "peer_iface": "data1"},
            {**host, "name": "s1", "address": "192.0.2.12", "role": "storage",
             "data_iface": "data0", "data_address": "10.9.1.12"},
        ],
        "storage": {"method": "sshfs", "export": "/srv/nimo"},
        "knobs": [{"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 1.0]},
                  {"name": "memory_mb", "kind": "memory_mb", "levels": [96, 256]}],
        "application": {"name": "fake", "command": ["fake-app", "{dataset}", "{workdir}"],
                        "dataset": {"path": "ds"}, "timeout_s": 30, "repeats": 1},
        "monitors": {"sar": False, "tshark": False, "profile": False},
        "policies": {"on_failure": "continue", "retries": 0},
    }
    doc.update(changes)
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


class Lab:
    """Fake hosts by name, handed to the runner as its connections."""

    def __init__(self, app: FakeApp | None = None) -> None:
        self.app = app or FakeApp()
        self.hosts: dict[str, FakeHost] = {}

    def host(self, name: str) -> FakeHost:
        if name not in self.hosts:
            self.hosts[name] = FakeHost(name, self.app)
        return self.hosts[name]

    def connect(self, host) -> FakeHost:
        return self.host(host.name)


def runner_on(tmp_path: Path, lab: Lab, **changes: object) -> SSHRunner:
    return open_runner(write_inventory(tmp_path, **changes), connect=lab.connect)


def app_runs(host: FakeHost) -> list[tuple[str, ...]]:
    return host.ran(lambda argv: argv[:3] == ("sh", "-c", ENTER_SCRIPT))


def test_runner_contract_members(tmp_path):
    runner = runner_on(tmp_path, Lab())
    assert isinstance(runner, Runner)
    assert SSHRunner.kind == "occupancy" and runner.hosts == ("c1", "c2", "s1")
    spec = runner.spec()
    assert spec == {"inventory": str((tmp_path / "inventory.yaml").resolve())}
    assert json.loads(json.dumps(spec)) == spec
    assert isinstance(runner.profiles, ProfileCache)
    assert runner.space.names == ("cpu_share", "memory_mb")


def test_a_run_gives_the_sample_of_the_measurements(tmp_path):
    lab = Lab(FakeApp(T=4.0, cpu_s=1.0, data_bytes=20_000_000))
    with runner_on(tmp_path, lab) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert out.status is RunStatus.DONE, out.reason
    s = out.sample
    assert s.T == pytest.approx(4.0)
    assert s.U == pytest.approx(1.0 / (4.0 * 0.5))  # CPU seconds / (T x allotted CPUs)
    assert s.D == pytest.approx(20.0)
    assert s.D * (s.o_a + s.o_n + s.o_d) == pytest.approx(s.T)
    assert s.meta["host"] == "c1" and s.meta["mount"] == "sshfs"
    assert s.meta["app_output"]["bytes_in"] == 10_000_000
    timing = s.meta["timing"]
    assert {"prepare_s", "setup_s", "app_wall_s", "teardown_s", "cost_s"} <= set(timing)
    assert out.overhead_s == pytest.approx(s.cost_s - s.T)  # the fake G takes no wall time
    (g,) = app_runs(lab.hosts["c1"])
    assert g[-3] == "fake-app" and g[-2].endswith("/ds")  # argv rendered, never a shell line
    assert not lab.hosts["c1"].mounts  # unmounted


def test_teardown_runs_in_reverse_order_even_when_a_step_fails(tmp_path):
    lab = Lab()
    c1 = lab.host("c1")
    c1.on(lambda argv: argv[3:4] == ("nimo-rmcg",), exit_code=1, stderr="cannot remove\n")
    with runner_on(tmp_path, lab) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert out.status is RunStatus.FAILED and out.sample is None
    assert out.reason.startswith("teardown incomplete: cgroup: ")
    undo = [argv[0] if argv[0] != "sh" else argv[3] for argv in c1.commands
            if argv[0] in ("rm", "fusermount3") or argv[3:4] == ("nimo-rmcg",)]
    assert undo.index("rm") < undo.index("nimo-rmcg")  # the work dir was made after the cgroup
    assert "fusermount3" in undo and not c1.mounts  # the other steps still ran


def test_a_failing_app_is_a_failed_outcome_with_the_reason(tmp_path):
    lab = Lab(FakeApp(exit_code=3, stderr="Traceback\nboom\n"))
    with runner_on(tmp_path, lab) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert out.status is RunStatus.FAILED and out.reason == "G exited 3: Traceback boom"
    assert runner.failures == 1
    assert not lab.hosts["c1"].mounts


def test_an_oom_kill_is_named_in_the_reason(tmp_path):
    lab = Lab(FakeApp(exit_code=137, oom_kills=1))
    with runner_on(tmp_path, lab) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert "after 1 OOM kill(s) (memory_mb=96.0)" in out.reason


def test_a_timeout_names_the_limit(tmp_path):
    lab = Lab()
    c1 = lab.host("c1")
    timeout = CommandTimeout(CommandResult("c1", ("sh",), 137, "", "", 30.0), 30.0)
    c1.on(lambda argv: argv[:3] == ("sh", "-c", ENTER_SCRIPT), raises=timeout)
    with runner_on(tmp_path, lab) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert out.reason.startswith("timeout: G exceeded application.timeout_s=30 s")


def test_a_transient_failure_is_retried_on_a_fresh_connection(tmp_path):
    lab = Lab()
    c1 = lab.host("c1")
    c1.on(["hostname"], raises=HostError("c1: connection dropped"))
    policies = {"on_failure": "continue", "retries": 1}
    with runner_on(tmp_path, lab, policies=policies) as runner:
        first = runner.run(RunRequest(1, A, "train"))
        assert first.ok and first.host == "c2"  # c1 failed it twice: another host ran it
        assert c1.closes >= 1  # the lane's connections were reset between the attempts
        assert len(c1.ran(["hostname"])) == 2  # two attempts (each failing to prepare c1)
        c1.on(["hostname"], "c1\n")
        runner.rotation.succeeded("c1")  # its backoff over
        assert runner.run_many([RunRequest(2, A, "train"), RunRequest(3, A, "train")])[0].ok


def test_repeats_take_the_median_t(tmp_path):
    lab = Lab()
    times = iter([5.0, 3.0, 4.0])
    c1 = lab.host("c1")
    run_g = c1.rules[-1].respond

    def vary(argv):
        lab.app.T = next(times)
        return run_g(argv)

    c1.on(lambda argv: argv[:3] == ("sh", "-c", ENTER_SCRIPT), call=vary)
    app = {"name": "fake", "command": ["fake-app"], "dataset": {"path": "ds"},
           "timeout_s": 30, "repeats": 3}
    with runner_on(tmp_path, lab, application=app) as runner:
        out = runner.run(RunRequest(1, A, "train"))
    assert out.ok and out.sample.T == pytest.approx(4.0)
    assert out.sample.meta["repeats_T"] == pytest.approx([5.0, 3.0, 4.0])


def test_run_many_uses_every_lane_and_the_stop_policy_stops_the_campaign(tmp_path):
    lab = Lab(FakeApp(exit_code=1))
    policies = {"on_failure": "stop", "retries": 0}
    seen = []
    with runner_on(tmp_path, lab, policies=policies) as runner:
        with pytest.raises(FailureBudgetExceeded, match=r"policies.on_failure: stop"):
            runner.run_many([RunRequest(i, A, "train") for i in (1, 2, 3, 4, 5)], seen.append)
        # the two lanes each finished the run they had started; nothing else was run
        assert sorted(o.request.run for o in seen) == [1, 2]
        assert all(o.status is RunStatus.FAILED and "not run" not in o.reason for o in seen)
        assert {h: len(app_runs(lab.host(h))) for h in ("c1", "c2")} == {"c1": 1, "c2": 1}
        assert runner.stopped_because.endswith("(policies.on_failure: stop)")
        with pytest.raises(FailureBudgetExceeded):  # and no later batch starts either
            runner.run(RunRequest(6, A, "train"))


SHAPED = {"cpu_share": 0.5, "rate_mbit": 100.0}
SHAPED_KNOBS = [{"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 1.0]},
                {"name": "rate_mbit", "kind": "rate_mbit", "levels": [100]}]


def shaping_lab() -> Lab:
    """Fake hosts whose ``tc`` keeps a 100 Mbit/s tbf from its ``replace`` to its ``del``."""
    lab = Lab()
    tbf = json.dumps([{"kind": "tbf", "handle": QDISC_HANDLE, "root": True,
                       "options": {"rate": 100e6 / 8}}])
    for name in ("c1", "s1"):
        host, shaped = lab.host(name), set()
        host.on(lambda a: a[:3] == ("tc", "qdisc", "replace"),
                call=lambda a, shaped=shaped: shaped.add(a[4]) or "")
        host.on(lambda a: a[:3] == ("tc", "qdisc", "del"),
                call=lambda a, shaped=shaped: shaped.discard(a[4]) or "")
        host.on(lambda a: a[:4] == ("tc", "-j", "qdisc", "show"),
                call=lambda a, shaped=shaped: tbf if a[5] in shaped else "[]")
    return lab


def test_the_link_is_emulated_before_the_mount_connects(tmp_path):
    """A mount connected on the bare link keeps what its TCP measured there (BBR's minimum
    RTT for 10 s): the tbf is in place on both ends before sshfs runs."""
    lab = shaping_lab()
    with runner_on(tmp_path, lab, knobs=SHAPED_KNOBS) as runner:
        out = runner.run(RunRequest(1, SHAPED, "train"))
    assert out.status is RunStatus.DONE, out.reason
    c1, s1 = lab.hosts["c1"], lab.hosts["s1"]
    tbf_set = [c.ran(lambda a: a[:3] == ("tc", "qdisc", "replace")) for c in (c1, s1)]
    assert [len(t) for t in tbf_set] == [1, 1]  # both ends of the link
    (mount,) = c1.ran(lambda a: a[0] == "sshfs")
    assert c1.commands.index(tbf_set[0][0]) < c1.commands.index(mount)


@pytest.mark.parametrize(("failing", "phase"), [
    (lambda a: a[:3] == ("tc", "qdisc", "replace"), "network"),
    (lambda a: a[0] == "sshfs", "mount"),
])
def test_a_failed_set_up_step_is_named_in_the_reason(tmp_path, failing, phase):
    lab = shaping_lab()
    lab.host("c1").on(failing, exit_code=1, stderr="boom\n")
    with runner_on(tmp_path, lab, knobs=SHAPED_KNOBS) as runner:
        out = runner.run(RunRequest(1, SHAPED, "train"))
    assert out.status is RunStatus.FAILED
    assert f"({phase}: " in out.reason, out.reason  # cause first, then the step
    assert not lab.hosts["c1"].mounts
