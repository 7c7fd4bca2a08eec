"""How long a host may stay silent (``hosts[i].hung_after_s``) and a cut host's next
campaign: the inventory key sets the keepalives of every connection to the host, a bad
value is refused naming it, and a new campaign's runner tries a host that an earlier
campaign's interrupt cut for good again (a notebook or a service lives on)."""

from __future__ import annotations

import pytest
import yaml

from tests.unit.test_executor_runs import write_inventory
from workbench.errors import InventoryError
from workbench.executor import SSHRunner
from workbench.inventory import load_inventory
from workbench.remote import Connection, liveness


def _with_hung_after(tmp_path, value: object):
    path = write_inventory(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["hosts"][0]["hung_after_s"] = value
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_hung_after_sets_the_keepalives_of_the_hosts_connections(tmp_path) -> None:
    inventory = load_inventory(_with_hung_after(tmp_path, 300))
    c1, c2 = inventory.hosts[0], inventory.hosts[1]
    assert (c1.hung_after_s, c2.hung_after_s) == (300.0, 45.0)  # the default: OpenSSH's 3 x 15
    assert Connection.for_host(c1).alive_interval_s == 100.0
    assert Connection.for_host(c2).alive_interval_s == 15.0
    assert Connection.for_host(c1, alive_interval_s=None).alive_interval_s is None


@pytest.mark.parametrize("value", [0, 1, "soon", 10 ** 9])
def test_a_bad_hung_after_is_refused_naming_the_key(tmp_path, value) -> None:
    with pytest.raises(InventoryError) as e:
        load_inventory(_with_hung_after(tmp_path, value))
    message = str(e.value)
    assert "hung_after_s" in message and "\n" not in message
    assert "valid: >= 3 and <= 86400" in message or "must be a number" in message


def test_a_new_campaigns_runner_tries_a_host_an_interrupt_cut_again(tmp_path) -> None:
    inventory = load_inventory(write_inventory(tmp_path))
    endpoints = [(h.address, h.port) for h in inventory.hosts]
    other = ("198.51.100.7", 22)  # not in the inventory: left as it is
    for endpoint in (*endpoints, other):
        liveness.silence(endpoint, "no answer within 10 s after the interrupt")
    try:
        SSHRunner(inventory, connect=lambda host: Connection.for_host(host))
        assert [liveness.silenced(e) for e in endpoints] == [None] * len(endpoints)
        assert liveness.silenced(other) is not None
    finally:
        liveness.pardon(other)
