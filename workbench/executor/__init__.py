"""The live SSH executor: ``SSHRunner`` runs G(I) on the inventory's hosts (Algorithm 2) and
turns each run's measurements into a Sample (Algorithm 3).

* ``runner``: ``SSHRunner``, the ``nimo.runner.Runner`` contract, and ``open_runner``;
* ``schedule``: lanes (one run at a time per compute host), repeats, the failure budget;
* ``hosts``: connections and the once-per-runner preparation of each host;
* ``attempt``: one run's set-up, G, monitors and teardown (reverse order, always);
* ``sample``: the pure step from a run's measurements to its ``Sample``.

A failed run is a ``RunOutcome(status=FAILED, reason=<one line>)``; ``run`` never raises for it.
"""

from workbench.executor.runner import SSHRunner, open_runner
from workbench.executor.sample import parse_timer

__all__ = ["SSHRunner", "open_runner", "parse_timer"]
