"""Pure steps of the executor and its fakes: measurements -> Sample, the teardown stack, the
parallel helper, G's exit status, and the FakeConnection's rules."""

from __future__ import annotations

import pytest

from nimo.records import occupancies
from workbench.collector import RunMeasurements, collect
from workbench.collector.net import IfaceCounters
from workbench.emulation import CgroupUsage
from workbench.errors import AppFailed, HostError, RemoteCommandFailed
from workbench.executor.attempt import Teardown
from workbench.executor.sample import RunFacts, RunHosts, app_time, build_sample
from workbench.monitors import MonitorReport
from workbench.remote import CommandResult
from workbench.remote.group import run_parallel
from workbench.testing import FakeConnection

A = {"cpu_share": 0.5, "rate_mbit": 100.0}
USAGE = CgroupUsage(cpu_s=9.0, nr_periods=10, nr_throttled=4, throttled_s=0.25, oom_kills=0,
                    memory_peak_bytes=64 * 2**20)


def facts(**kw) -> RunFacts:
    base = dict(
        assignment=A, kinds={"cpu_share": 0.5, "rate_mbit": 100.0},
        hosts=RunHosts("c1", "s1", "10.9.1.12"), run_id="r1-0-abcd", attempt=0, app="app",
        threads=1, T=10.0, cpu_s=2.5, usage=USAGE,
        report=MonitorReport(data=IfaceCounters(40_000_000, 10_000_000, 30_000, 8_000)),
        profile={"rtt_ms": 4.0, "bandwidth_mbit": 90.0}, mount_method="sshfs", network=None,
        stdout='{"app": "x", "records": 5, "nested": {"a": 1}}\n', timing={"setup_s": 0.5})
    base.update(kw)
    return RunFacts(**base)


def test_measurements_to_sample_gives_the_occupancies_of_algorithm3():
    s = build_sample(facts())
    U, D = 2.5 / (10.0 * 0.5), 50.0
    assert (s.T, s.U, s.D) == (10.0, pytest.approx(U), pytest.approx(D))
    expected = occupancies(10.0, U, D)  # no request count: o_s stays whole in o_n
    assert (s.o_a, s.o_n, s.o_d) == (pytest.approx(expected.o_a), pytest.approx(expected.o_n),
                                     0.0)
    direct = collect(A, RunMeasurements(T_s=10.0, cpu_s=2.5, cpus=0.5, data_bytes=50_000_000,
                                        method="sshfs", rtt_s=0.004, bandwidth_mbit=90.0))
    assert (s.o_a, s.o_n, s.o_d) == (direct.o_a, direct.o_n, direct.o_d)


def test_sample_meta_records_the_run():
    timing: dict[str, float] = {"setup_s": 0.5}
    s = build_sample(facts(timing=timing))
    assert s.meta["host"] == "c1" and s.meta["storage_host"] == "s1"
    assert s.meta["memory_peak_mb"] == 64.0 and s.meta["nr_throttled"] == 4
    assert s.meta["data_path"]["rx_bytes"] == 40_000_000
    assert s.meta["app_output"] == {"app": "x", "records": 5}  # nested values dropped
    assert s.profile == {"rtt_ms": 4.0, "bandwidth_mbit": 90.0}
    timing["collect_wait_s"] = 0.1  # the caller completes the timing later
    assert s.meta["timing"]["collect_wait_s"] == 0.1


def test_without_cpu_share_the_threads_are_the_allotted_cpus():
    s = build_sample(facts(kinds={}, threads=2, cpu_s=5.0))
    assert s.U == pytest.approx(5.0 / (10.0 * 2))


def _g(exit_code: int, stderr: str) -> CommandResult:
    return CommandResult("c1", ("g",), exit_code, "", stderr, 7.5)


def test_app_time_is_the_stamped_time_or_a_failure_with_the_stderr_tail():
    assert app_time(_g(0, "nimo-T 10.0 12.5 0\n"), 0, None) == pytest.approx(2.5)
    assert app_time(_g(0, "no stamp"), 0, None) == 7.5
    with pytest.raises(AppFailed, match=r"^G exited 2: bad input$"):
        app_time(_g(2, "bad input\nnimo-T 10.0 12.5 2\n"), 0, None)
    with pytest.raises(AppFailed, match=r"after 2 OOM kill\(s\) \(memory_mb=64\)"):
        app_time(_g(137, ""), 2, 64)


def test_teardown_runs_every_step_in_reverse_and_collects_the_errors():
    done: list[str] = []

    def fail() -> None:
        done.append("b")
        raise RemoteCommandFailed(CommandResult("c1", ("rmdir", "x"), 1, "", "busy\n", 0.1))

    teardown = Teardown()
    with pytest.raises(KeyError), teardown:
        teardown.push_step("a", lambda: done.append("a"))
        teardown.push_step("b", fail)
        teardown.push_step("c", lambda: done.append("c"))
        raise KeyError("set-up failed")
    assert done == ["c", "b", "a"]
    assert len(teardown.errors) == 1 and teardown.errors[0].startswith("b: busy (c1: `rmdir x`")
    assert teardown.seconds >= 0.0


def test_run_parallel_keeps_values_and_exceptions_in_order():
    def boom() -> int:
        raise HostError("h: down")

    got = run_parallel({"a": lambda: 1, "b": boom, "c": lambda: 3})
    assert list(got) == ["a", "b", "c"] and got["a"] == 1 and got["c"] == 3
    assert isinstance(got["b"], HostError)
    assert isinstance(run_parallel({"only": boom})["only"], HostError)


def test_fake_connection_rules_record_and_files():
    conn = FakeConnection("c1").on(["hostname"], "c1\n").on(r"^tc qdisc", exit_code=2,
                                                             stderr="unknown qdisc")
    assert conn.run(["hostname"]).stdout == "c1\n"
    assert conn.run(["tc", "qdisc", "show"], check=False).exit_code == 2
    with pytest.raises(RemoteCommandFailed, match="unknown qdisc"):
        conn.run(["tc", "qdisc", "add"])
    assert conn.run(["true"]).ok  # unmatched: exit 0
    conn.on(["hostname"], "renamed\n")  # later rules win
    assert conn.run(["hostname"]).stdout == "renamed\n"
    assert conn.ran(r"^tc ") == [("tc", "qdisc", "show"), ("tc", "qdisc", "add")]
    conn.write_text("/tmp/x", "hi")
    assert conn.read_text("/tmp/x") == "hi"
    with pytest.raises(HostError):
        conn.read_text("/nope")
    proc = conn.start(["sleep", "9"])
    assert proc.running() and proc.stop().ok and not proc.running()
