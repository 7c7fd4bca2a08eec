"""Fakes shipped with the workbench, for tests without root or hosts.

* ``FakeConnection``: a ``Connection`` answering commands from rules (argv, regex or
  predicate -> output and exit code), recording every command;
* ``FakeHost``: a ``FakeConnection`` that behaves like the Linux host a run needs (cgroups,
  mounts, data counters) and runs a ``FakeApp`` as G.
"""

from workbench.testing.fake_connection import Answer, FakeConnection, FakeProcess
from workbench.testing.fake_host import FakeApp, FakeHost

__all__ = ["Answer", "FakeApp", "FakeConnection", "FakeHost", "FakeProcess"]
