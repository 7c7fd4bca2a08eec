"""``workbench.ownership``: claims across simulated machines, the same-kernel dead-pid
shortcut, and a process that learns it lost its claim."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from nimo.store import open_store
from nimo.store.types import Owner
from workbench.ownership import Busy, Presence, _machine


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_two_machines_never_take_each_others_live_claim(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NIMO_HEARTBEAT_S", "0.05")
    monkeypatch.setenv("NIMO_STALE_S", "0.5")
    with open_store(f"sqlite:///{tmp_path}/o.db") as store:
        monkeypatch.setenv("NIMO_HOSTNAME", "machine-a")
        with Presence(store) as a:
            a.claim("c")
            a.lease("c", ["h1"])
            monkeypatch.setenv("NIMO_HOSTNAME", "machine-b")
            with Presence(store) as b:
                time.sleep(1.0)  # twice the stale time: a's heartbeat keeps it alive
                with pytest.raises(Busy, match="host machine-a pid"):
                    b.claim("c")
                with pytest.raises(Busy, match="host h1 is leased to campaign 'c'"):
                    b.lease("d", ["h1"])
        assert store.leases() == [] and store.campaign_owner("c") is None


def test_an_owner_gone_on_this_machine_is_dead_at_once(tmp_path) -> None:
    with open_store(f"sqlite:///{tmp_path}/o.db") as store:
        pid = _dead_pid()
        gone = store.register_owner(Owner(f"here:{pid}:{_machine()}:x", "here", pid))
        far = store.register_owner(Owner(f"far:{pid}:othermachine:x", "far", pid))
        assert store.claim_campaign("c", gone.id, stale_s=60) is None
        assert store.claim_campaign("d", far.id, stale_s=60) is None
        with Presence(store) as me:
            me.claim("c")  # its pid is gone on this kernel: no need to wait 60 s
            with pytest.raises(Busy, match="host far pid"):
                me.claim("d")  # another machine's pid says nothing here


def test_a_process_whose_claim_was_reaped_is_told(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NIMO_HEARTBEAT_S", "0.05")
    lost = threading.Event()
    with open_store(f"sqlite:///{tmp_path}/o.db") as store, \
            Presence(store, on_lost=lost.set) as me:
        me.claim("c")
        store.drop_owner(me.id)  # as a process that judged it stale would
        assert lost.wait(5)
