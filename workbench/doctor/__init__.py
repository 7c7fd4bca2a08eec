"""``nimo doctor INVENTORY``: is every host of an inventory ready for live runs?

Per host: reachable over SSH with its key and verified host key, root, python3, what the
delay fallback needs (netem, or python3 NetfilterQueue and iptables), tc and the qdisc
kinds the knobs need, cgroup v1/v2 controllers (compute), sadc/sadf (``monitors.sar``),
tshark/dumpcap (``monitors.tshark``), the storage client (sshfs or NFS), free space on the
work dirs, clock skew. A blocker is something that would fail every run; a warning is
worth knowing. ``preflight`` runs before every ``nimo campaign run`` and ``resume``.

* ``checks``: the checks as data (``Check``: argv + parse);
* ``run``: running them over hosts in parallel, ``preflight``;
* ``report``: table and JSON.
"""

from workbench.doctor.checks import BLOCKER, CHECKS, OK, WARN, Check, Context
from workbench.doctor.run import Finding, PreflightError, blockers, diagnose, preflight

__all__ = ["BLOCKER", "CHECKS", "OK", "WARN", "Check", "Context", "Finding", "PreflightError",
           "blockers", "diagnose", "preflight"]
