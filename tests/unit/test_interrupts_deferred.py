"""A teardown that must finish: interrupts are noted and raised after it (a double SIGTERM
once left a private app dir behind), and a connection broken by the interrupt is reopened
to remove the app dir."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from workbench.executor.hosts import HostPool
from workbench.exitstatus import Terminated, interrupts_deferred, signals_interrupt
from workbench.inventory import load_inventory

REPO = Path(__file__).resolve().parents[2]


def test_signals_inside_are_raised_after_the_block() -> None:
    done = []
    with pytest.raises(Terminated) as caught, signals_interrupt(), \
            interrupts_deferred() as noted:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGHUP)
        done.append(len(noted))  # still running: nothing raised yet
    assert done == [2] and caught.value.signum == signal.SIGTERM


def test_ctrl_c_is_noted_too_and_not_reraised_on_request() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with interrupts_deferred(reraise=False) as noted:
        os.kill(os.getpid(), signal.SIGINT)
    assert len(noted) == 1 and type(noted[0]) is KeyboardInterrupt
    assert {s: signal.getsignal(s) for s in before} == before  # the handlers are back


class _Conn:
    def __init__(self, log: list, broken: bool) -> None:
        self.log, self.broken = log, broken

    def run(self, argv, **kw):
        if self.broken:
            raise OSError("Socket is closed")
        self.log.append(argv)

    def close(self) -> None:
        self.log.append("closed")


def test_close_reopens_a_broken_connection_to_remove_the_app_dir(monkeypatch) -> None:
    inv = load_inventory(REPO / "inventories" / "example.yaml")
    opened: list = []
    log: list = []

    def connect(host):
        opened.append(host.name)
        return _Conn(log, broken=len(opened) == 1)  # the first connection is broken

    monkeypatch.setattr("workbench.executor.hosts.forget", lambda conn, run_id: None)
    pool = HostPool(inv, connect)
    host = inv.hosts[0].name
    pool.app_dirs[host] = "/tmp/nimo-x-apps-AbC"
    pool.close()
    assert opened == [host, host]
    assert ["rm", "-rf", "--", "/tmp/nimo-x-apps-AbC"] in log and pool.app_dirs == {}


def test_a_host_that_fails_both_the_app_dir_and_the_sweep_is_named_once(monkeypatch,
                                                                       capsys) -> None:
    """A hung host at an interrupt fails the app dir's removal and would fail the sweep of
    the campaign's leftovers too; it is named in one line, with the command that cleans."""
    inv = load_inventory(REPO / "inventories" / "example.yaml")
    swept: list = []
    monkeypatch.setattr("workbench.executor.hosts.clean",
                        lambda conn, campaign: swept.append(campaign))
    pool = HostPool(inv, lambda host: _Conn([], broken=True))
    pool.campaign, pool.left_behind = "c1", True
    host = inv.hosts[0].name
    pool.app_dirs[host] = "/tmp/nimo-x-apps-AbC"
    pool.close()
    err = capsys.readouterr().err
    assert err.count(host) == 1 and swept == [], err
    assert f"`nimo clean --campaign c1 {inv.path}` removes it" in err
