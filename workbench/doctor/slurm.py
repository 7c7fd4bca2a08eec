"""Doctor checks of an inventory with ``executor: slurm``, run on this machine: the Slurm
client commands installed, slurmctld reachable (``sinfo``), the partition there and up with
nodes enough for the largest ``nodes`` level, the shared work directory writable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from workbench.doctor.checks import BLOCKER, OK, WARN
from workbench.inventory import Inventory

HOST = "slurm"


def diagnose_slurm(inventory: Inventory) -> list[tuple[str, str, str, str]]:
    """(host, check, level, detail) findings; ``host`` is ``slurm`` (the cluster)."""
    from workbench.slurm.commands import SlurmCli, SlurmCommandError

    missing = [t for t in ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
               if shutil.which(t) is None]
    if missing:
        return [(HOST, "slurm-client", BLOCKER, f"not installed: {', '.join(missing)} "
                 "(Debian: slurm-client)")]
    cfg = inventory.slurm
    found = [(HOST, "slurm-client", OK, "sbatch, squeue, scontrol, scancel, sinfo")]
    try:
        parts = SlurmCli(cfg.conf).partitions()
    except SlurmCommandError as e:
        conf = cfg.conf or "the system's slurm.conf"
        return [*found, (HOST, "sinfo", BLOCKER, f"slurmctld not reachable with {conf}: {e}")]
    found.append((HOST, "sinfo", OK, f"slurmctld answers; partitions: {', '.join(parts)}"))
    found.append(_partition(inventory, parts))
    found.append(_work_dir(inventory))
    return found


def _partition(inventory: Inventory, parts: dict[str, str]) -> tuple[str, str, str, str]:
    name = inventory.slurm.partition
    if name is None:
        return (HOST, "partition", OK, "slurm.partition not set: the cluster's default")
    if name not in parts:
        return (HOST, "partition", BLOCKER, f"partition {name!r} does not exist; "
                f"valid: {', '.join(parts) or '(none)'}")
    avail, _, states = parts[name].partition(": ")
    words = states.split()
    nodes = sum(int(n) for n in words[0::2] if n.isdigit())
    usable = sum(int(n) for n, s in zip(words[0::2], words[1::2], strict=False)
                 if n.isdigit() and s.rstrip("*~#") in ("idle", "mix", "alloc", "comp"))
    need = max((max(k.levels) for k in inventory.knobs if k.kind == "nodes"), default=1)
    if avail != "up":
        return (HOST, "partition", BLOCKER, f"partition {name} is {avail}")
    if usable < need:
        return (HOST, "partition", WARN, f"partition {name}: {usable} of {nodes} nodes usable "
                f"({states}); the nodes knob goes up to {need:g}")
    return (HOST, "partition", OK, f"partition {name} up: {states}")


def _work_dir(inventory: Inventory) -> tuple[str, str, str, str]:
    d = Path(inventory.slurm.work_dir or f"{inventory.storage.export}/.nimo-slurm")
    probe = d if d.exists() else d.parent
    if probe.exists() and os.access(probe, os.W_OK | os.X_OK):
        return (HOST, "work-dir", OK, f"{d} writable (must be shared with every node)")
    return (HOST, "work-dir", BLOCKER, f"{d} is not writable here (slurm.work_dir: a "
            "directory shared with every node)")
