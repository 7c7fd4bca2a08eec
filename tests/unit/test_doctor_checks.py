"""``nimo doctor``: the checks' parsing on canned host answers (FakeConnection), blockers,
the table and JSON, and the preflight that stops a campaign before any run (issue 10,
item 3)."""

from __future__ import annotations

import json
import time

import pytest
from test_executor_runs import write_inventory

from workbench.cli import main
from workbench.doctor import BLOCKER, OK, WARN, diagnose, preflight
from workbench.doctor import checks as C
from workbench.doctor.run import PreflightError
from workbench.errors import HostError, HostRefused
from workbench.inventory import load_inventory
from workbench.testing import FakeConnection

KNOBS = [{"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 1.0]},
         {"name": "delay_ms", "kind": "delay_ms", "levels": [0, 10]},
         {"name": "rate_mbit", "kind": "rate_mbit", "levels": [20, 100]}]
MONITORS = {"sar": True, "tshark": True, "profile": False}


def script(text: str):
    return lambda argv: len(argv) >= 3 and argv[:2] == ("sh", "-c") and argv[2] == text


def healthy(name: str) -> FakeConnection:
    conn = FakeConnection(name)
    conn.on(script(C.ROOT_SCRIPT), "0\n")
    conn.on(["python3", "-c", C.PY_VERSION], "3.11.2\n")
    conn.on(script(C.DELAY_SCRIPT), "netem=no\nnfqueue=yes\niptables=yes\n")
    conn.on(script(C.QDISC_SCRIPT), "tbf=yes\n")
    conn.on(script(C._DETECT_SCRIPT),
            "--- cgroup\n0::/\n--- v2\n/sys/fs/cgroup cpuset cpu io memory pids\n")
    conn.on(script(C.SYSSTAT_SCRIPT), "sadc=/usr/lib/sysstat/sadc\nsadf=yes\n")
    conn.on(script(C.CAPTURE_SCRIPT), "tshark=yes\ndumpcap=yes\n")
    conn.on(script(C.STORAGE_SCRIPT), "sshfs=yes\nnfs=no\nganesha=no\n")
    conn.on(script(C.DF_SCRIPT), call=lambda argv: "".join(f"{p} 5000000\n" for p in argv[4:]))
    conn.on(["date", "+%s.%N"], call=lambda argv: f"{time.time():.6f}\n")
    return conn


@pytest.fixture
def inventory(tmp_path):
    return write_inventory(tmp_path, knobs=KNOBS, monitors=MONITORS)


def run_doctor(path, hosts: dict[str, FakeConnection]):
    return diagnose(load_inventory(path), lambda host: hosts[host.name])


def levels(findings, host: str) -> dict[str, str]:
    return {f.check: f.level for f in findings if f.host == host}


def test_a_healthy_inventory_has_no_blocker(inventory) -> None:
    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    findings = run_doctor(inventory, hosts)
    assert {f.level for f in findings} == {OK}
    assert list(levels(findings, "c1")) == ["ssh", "root", "python3", "delay", "tc", "cgroups",
                                          "sysstat", "tshark", "storage", "disk", "clock"]
    assert "cgroups" not in levels(findings, "s1")  # compute hosts only
    delay = next(f for f in findings if f.check == "delay")
    assert "NFQUEUE" in delay.detail
    disk = next(f for f in findings if f.host == "c1" and f.check == "disk")
    assert disk.detail.startswith("/tmp 4883 MB free")


@pytest.mark.parametrize(("check", "rule", "answer", "needle"), [
    ("root", script(C.ROOT_SCRIPT), "1000\nsudo\n", "uid 1000, passwordless sudo"),
    ("python3", ["python3", "-c", C.PY_VERSION], None, "python3 not found"),
    ("delay", script(C.DELAY_SCRIPT), "netem=no\nnfqueue=no\niptables=yes\n",
     "no python3 with NetfilterQueue"),
    ("tc", script(C.QDISC_SCRIPT), None, "tc not found"),
    ("tc", script(C.QDISC_SCRIPT), "tbf=no\n", "needs the tbf qdisc"),
    ("cgroups", script(C._DETECT_SCRIPT), "--- cgroup\n0::/\n--- v2\n/sys/fs/cgroup pids\n",
     "no usable cgroups"),
    ("sysstat", script(C.SYSSTAT_SCRIPT), "sadf=no\n", "sadc and sadf not found"),
    ("tshark", script(C.CAPTURE_SCRIPT), "tshark=no\ndumpcap=yes\n", "tshark not found"),
    ("storage", script(C.STORAGE_SCRIPT), "sshfs=no\nnfs=yes\nganesha=no\n",
     "storage.method sshfs needs sshfs"),
    ("disk", script(C.DF_SCRIPT), "/tmp/nimo-work 20000\n/tmp 5000000\n",
     "below 100 MB at /tmp/nimo-work"),
])
def test_each_blocker_names_the_host_and_check(inventory, check, rule, answer, needle) -> None:
    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    if answer is None:
        hosts["c2"].on(rule, exit_code=127, stderr="sh: 1: not found")
    else:
        hosts["c2"].on(rule, answer)
    findings = run_doctor(inventory, hosts)
    bad = [f for f in findings if f.level == BLOCKER]
    assert [(f.host, f.check) for f in bad] == [("c2", check)], bad
    assert needle in bad[0].detail


def test_unreachable_and_refused_hosts_are_blockers_checked_once(inventory) -> None:
    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    opens = []

    class Refusing(FakeConnection):
        def __init__(self, name, error):
            super().__init__(name)
            self.error = error

        def open(self):
            opens.append(self.name)
            raise self.error

    hosts["c1"] = Refusing("c1", HostRefused("c1: host key mismatch for 192.0.2.11"))
    hosts["s1"] = Refusing("s1", HostError("s1: unreachable at 192.0.2.12:22"))
    findings = run_doctor(inventory, hosts)
    assert [(f.host, f.check, f.level) for f in findings if f.host != "c2"] == [
        ("c1", "ssh", BLOCKER), ("s1", "ssh", BLOCKER)]
    assert sorted(opens) == ["c1", "s1"] and hosts["c1"].commands == []


def test_clock_skew_and_old_python_are_warnings(inventory) -> None:
    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    hosts["s1"].on(["date", "+%s.%N"], call=lambda argv: f"{time.time() + 30:.6f}\n")
    hosts["s1"].on(["python3", "-c", C.PY_VERSION], "3.6.9\n")
    got = levels(run_doctor(inventory, hosts), "s1")
    assert got["clock"] == WARN and got["python3"] == WARN
    assert BLOCKER not in got.values()


def test_checks_follow_the_inventory(tmp_path) -> None:
    path = write_inventory(tmp_path, monitors={"sar": False, "tshark": False, "profile": False})
    findings = run_doctor(path, {n: healthy(n) for n in ("c1", "c2", "s1")})
    checks = {f.check for f in findings}
    assert not checks & {"delay", "tc", "sysstat", "tshark"}  # no such knobs or monitors


def test_preflight_raises_one_line_naming_host_and_check(inventory) -> None:
    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    hosts["s1"].on(script(C.CAPTURE_SCRIPT), "tshark=no\ndumpcap=no\n")
    with pytest.raises(PreflightError) as e:
        preflight(str(inventory), lambda host: hosts[host.name])
    text = str(e.value)
    assert "host s1, check tshark: tshark and dumpcap not found" in text and "\n" not in text
    assert len(preflight(str(inventory), lambda host: healthy(host.name))) > 20


def test_cli_table_json_and_exit_status(inventory, monkeypatch, capsys) -> None:
    import workbench.doctor.run as run

    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    monkeypatch.setattr(run, "ssh_connect", lambda host: hosts[host.name])
    assert main(["doctor", str(inventory)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["host", "check", "result", "detail"]
    assert out.rstrip().endswith("3 host(s) ready; 0 warning(s)")
    hosts["c1"].on(script(C.ROOT_SCRIPT), "1000\n")
    assert main(["doctor", str(inventory), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["blockers"] == 1 and doc["ok"] is False
    assert doc["hosts"]["c1"][1] == {"host": "c1", "check": "root", "level": BLOCKER,
                                     "detail": doc["hosts"]["c1"][1]["detail"]}


def test_campaign_run_stops_before_any_run_on_a_blocker(inventory, monkeypatch,
                                                        capsys, tmp_path) -> None:
    import workbench.doctor.run as run

    hosts = {n: healthy(n) for n in ("c1", "c2", "s1")}
    hosts["c2"].on(script(C.STORAGE_SCRIPT), "sshfs=no\nnfs=no\nganesha=no\n")
    monkeypatch.setattr(run, "ssh_connect", lambda host: hosts[host.name])
    url = f"sqlite:///{tmp_path}/p.db"
    assert main(["campaign", "run", str(inventory), "--store", url, "--name", "p",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "host c2, check storage" in err
    assert not (tmp_path / "p.db").exists()  # nothing was started
