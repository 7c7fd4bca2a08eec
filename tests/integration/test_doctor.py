"""``nimo doctor`` and the preflight on the namespace lab: a healthy lab passes; a hidden
tool, a wrong key and unknown host keys are named blockers found before any run; a fatal
error or the failure policy stops a live campaign at once (issue 10, items 2-4; issue 11,
item 13). Nothing on the real system is changed: tools are hidden by a PATH override."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from nimo.store import open_store
from workbench.cli import main
from workbench.doctor import BLOCKER, OK, diagnose
from workbench.doctor import run as doctor_run
from workbench.inventory import load_inventory
from workbench.remote import Connection

pytestmark = [pytest.mark.lab]

KNOBS = [{"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 1.0]},
         {"name": "delay_ms", "kind": "delay_ms", "levels": [0, 4]},
         {"name": "rate_mbit", "kind": "rate_mbit", "levels": [50, 200]}]


def inventory(lab, tmp_path: Path, name: str = "inv", **changes) -> str:
    from conftest import lab_inventory

    return lab_inventory(lab, tmp_path, "checksum", 2, dataset="checksum-doctor", name=name,
                         knobs=KNOBS, **changes)


def test_a_healthy_lab_has_no_blocker(lab, tmp_path, capsys) -> None:
    path = inventory(lab, tmp_path)
    findings = diagnose(load_inventory(path))
    assert [f for f in findings if f.level == BLOCKER] == []
    by = {(f.host, f.check): f for f in findings}
    for host in ("compute1", "compute2", "storage1"):
        for check in ("ssh", "root", "python3", "delay", "tc", "sysstat", "tshark", "storage",
                      "disk", "clock"):
            assert (host, check) in by, (host, check)
    assert by[("compute1", "cgroups")].level == OK
    assert main(["doctor", path]) == 0
    assert "3 host(s) ready" in capsys.readouterr().out


def _path_without(tmp_path: Path, lab, hidden: set[str]) -> str:
    """A directory of wrappers of every tool on the lab hosts' PATH except ``hidden``."""
    with lab.connect("compute1") as conn:
        remote_path = conn.run(["sh", "-c", "echo $PATH"]).stdout.strip()
    shim = tmp_path / "bin"
    shim.mkdir()
    for d in remote_path.split(":"):
        if not os.path.isdir(d):
            continue
        for tool in os.listdir(d):
            src = Path(d, tool)
            if tool not in hidden and not (shim / tool).exists() and os.access(src, os.X_OK):
                # a wrapper, not a link: a venv's python3 finds its packages (NetfilterQueue,
                # which the delay check imports) only when run by its own path
                (shim / tool).write_text(f'#!/bin/sh\nexec {shlex.quote(str(src))} "$@"\n')
                (shim / tool).chmod(0o755)
    return str(shim)


class PathConnection(Connection):
    """The runner's connection, every command run with PATH replaced."""

    path = ""

    def run(self, argv, **kwargs):  # type: ignore[override]
        kwargs["env"] = {**(kwargs.get("env") or {}), "PATH": self.path}
        return super().run(argv, **kwargs)


def test_hidden_tshark_is_a_blocker_that_stops_the_campaign(lab, tmp_path, monkeypatch,
                                                              capsys) -> None:
    path = inventory(lab, tmp_path)
    PathConnection.path = _path_without(tmp_path, lab, {"tshark", "dumpcap"})
    monkeypatch.setattr(doctor_run, "ssh_connect", lambda host: PathConnection.for_host(
        host, connect_timeout=10, retries=0))
    findings = diagnose(load_inventory(path))
    bad = {(f.host, f.check) for f in findings if f.level == BLOCKER}
    assert bad == {("compute1", "tshark"), ("compute2", "tshark"), ("storage1", "tshark")}
    assert main(["doctor", path]) == 1
    capsys.readouterr()
    url = f"sqlite:///{tmp_path}/pre.db"
    assert main(["campaign", "run", path, "--store", url, "--name", "pre", "--quiet"]) == 2
    err = capsys.readouterr().err
    first_host = load_inventory(path).hosts[0].name
    assert err.count("\n") == 1
    assert f"host {first_host}, check tshark: tshark and dumpcap not found" in err
    assert "(and 2 more blocker(s))" in err
    assert not (tmp_path / "pre.db").exists()  # stopped before the campaign was created


def _wrong_key(tmp_path: Path) -> str:
    key = tmp_path / "wrong_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return str(key)


def _with_hosts(lab, tmp_path: Path, name: str, **host_changes) -> str:
    path = inventory(lab, tmp_path, name=name)
    doc = yaml.safe_load(Path(path).read_text())
    for h in doc["hosts"]:
        h.update(host_changes)
    Path(path).write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("case", ["wrong key", "host key unknown", "no known_hosts"])
def test_refusals_are_blockers_without_retries(lab, tmp_path, case) -> None:
    changes = {"wrong key": {"key_file": _wrong_key(tmp_path)} if case == "wrong key" else {},
               "host key unknown": {"known_hosts": str(tmp_path / "empty_known_hosts")},
               "no known_hosts": {"known_hosts": str(tmp_path / "missing" / "known_hosts")},
               }[case]
    (tmp_path / "empty_known_hosts").write_text("")
    path = _with_hosts(lab, tmp_path, "refused", **changes)
    t0 = time.monotonic()
    findings = diagnose(load_inventory(path))
    elapsed = time.monotonic() - t0
    assert {(f.check, f.level) for f in findings} == {("ssh", BLOCKER)}
    needle = {"wrong key": "rejected for root@", "host key unknown": "is not in",
              "no known_hosts": "known_hosts file"}[case]
    assert all(needle in f.detail for f in findings), findings
    assert elapsed < 5.0  # refused at once: no backoff and retries


def test_a_refused_host_stops_a_live_campaign_at_once(lab, tmp_path, capsys) -> None:
    """--skip-doctor: the executor itself stops on the fatal error (exit 2, campaign failed,
    no run recorded as failed, nothing retried)."""
    path = _with_hosts(lab, tmp_path, "fatal", key_file=_wrong_key(tmp_path))
    url = f"sqlite:///{tmp_path}/fatal.db"
    t0 = time.monotonic()
    code = main(["campaign", "run", path, "--store", url, "--name", "fatal", "--quiet",
                 "--skip-doctor"])
    assert code == 2 and time.monotonic() - t0 < 30
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rejected for root@" in err
    with open_store(url) as store:
        assert store.campaign("fatal").status == "failed"
        runs = store.runs("fatal")
    assert [r for r in runs if r.status == "failed"] == []
    assert all(r.attempts == 1 for r in runs)


def test_max_failures_stops_a_live_campaign(lab, tmp_path, capsys) -> None:
    path = inventory(lab, tmp_path, name="budget",
                     policies={"on_failure": "continue", "max_failures": 2, "retries": 0})
    doc = yaml.safe_load(Path(path).read_text())
    doc["application"]["command"] = ["false"]
    doc["monitors"]["profile"] = False
    Path(path).write_text(yaml.safe_dump(doc, sort_keys=False))
    url = f"sqlite:///{tmp_path}/budget.db"
    code = main(["campaign", "run", path, "--store", url, "--name", "budget", "--quiet"])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "runs failed beyond policy" in err and "policies.max_failures=2" in err
    with open_store(url) as store:
        info = store.campaign("budget")
        failed = [r for r in store.runs("budget") if r.status == "failed"]
    assert info.status == "failed" and "max_failures=2" in info.stopped_because
    assert 2 <= len(failed) <= 3  # the second lane may have been running when it stopped
