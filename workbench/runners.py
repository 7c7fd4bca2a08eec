"""The runner registry: how each campaign kind stores its runner and rebuilds it.

A campaign's stored spec holds its runner's ``spec()`` (under ``spec_key``, or at the top
level); ``open_runner_for`` rebuilds the runner of a stored campaign from it. Adding a runner
(say, a Slurm one) is one ``Runner`` class, one entry in ``RUNNERS`` and one
``CampaignKind``. A live campaign's runner is chosen by its inventory's ``executor``
(``ssh``: ``SSHRunner``; ``slurm``: ``workbench.slurm.SlurmRunner``, whose stored spec adds
``slurm_tag``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nimo.errors import ConfigError, StoreError
from nimo.records import CampaignInfo, CampaignKind
from nimo.runner import Runner


@dataclass(frozen=True)
class RunnerEntry:
    """One campaign kind's runner: where its spec is stored and how it is rebuilt."""

    build: Callable[[Mapping[str, Any]], Runner]
    spec_key: str | None = None  # the campaign spec key holding the runner spec; None: top
    needs: str = "spec"  # the spec key without which the runner cannot be rebuilt

    def stored_spec(self, runner_spec: Mapping[str, Any]) -> dict[str, Any]:
        """The part of a campaign's spec that holds ``runner_spec`` (a runner's ``spec()``)."""
        return {self.spec_key: dict(runner_spec)} if self.spec_key else dict(runner_spec)

    def runner_spec(self, info: CampaignInfo) -> Mapping[str, Any]:
        spec = info.spec.get(self.spec_key) if self.spec_key else info.spec
        if not spec or self.needs not in spec:
            raise StoreError(f"{info.kind} campaign {info.name!r} was stored without its "
                             f"runner's {self.needs}",
                             hint="it can only be resumed by the process that made it")
        return spec


def _replay(spec: Mapping[str, Any]) -> Runner:
    from workbench.replay import ReplayRunner

    return ReplayRunner.from_spec(spec)


def _live(spec: Mapping[str, Any]) -> Runner:
    """A live campaign's runner: the inventory's ``executor`` picks it (SSH or Slurm)."""
    try:
        from workbench.executor import SSHRunner
        from workbench.inventory import load_inventory
    except ImportError as e:
        raise ConfigError("live campaigns need workbench.executor, which failed to import",
                          hint=str(e)) from None
    inventory = load_inventory(spec["inventory"])
    if inventory.executor == "slurm":
        from workbench.slurm import SlurmRunner

        # the tag names the campaign's jobs: a resumed campaign finds them by it
        return SlurmRunner(inventory, tag=spec.get("slurm_tag"))
    return SSHRunner(inventory)


def live_spec(inventory_path: str) -> tuple[dict[str, Any], list[str], int]:
    """The runner spec, the hosts to lease and the runner's concurrency of a live campaign
    queued without running (``nimo campaign submit``); a Slurm campaign gets its job tag
    now, so that every later start of it (the service, a resume) finds the same jobs."""
    from pathlib import Path

    from workbench.inventory import load_inventory

    inventory = load_inventory(inventory_path)
    spec: dict[str, Any] = {"inventory": str(Path(inventory_path).resolve())}
    if inventory.executor != "slurm":
        from workbench.executor import SSHRunner

        return spec, [h.name for h in inventory.hosts], SSHRunner.concurrency
    from workbench.slurm import SlurmRunner

    runner = SlurmRunner(inventory)
    return {**spec, **runner.spec()}, list(runner.hosts), runner.concurrency


RUNNERS: dict[str, RunnerEntry] = {
    CampaignKind.REPLAY: RunnerEntry(_replay, spec_key="dataset", needs="path"),
    CampaignKind.LIVE: RunnerEntry(_live, needs="inventory"),
}


def runner_entry(kind: str) -> RunnerEntry:
    """The registry entry of campaign kind ``kind``; ``ConfigError`` listing the valid ones."""
    try:
        return RUNNERS[kind]
    except KeyError:
        raise ConfigError(f"no runner for campaign kind {kind!r}",
                          hint="valid: " + ", ".join(RUNNERS)) from None


def open_runner_for(info: CampaignInfo) -> Runner:
    """Rebuild the runner of a stored campaign from its spec."""
    entry = runner_entry(info.kind)
    return entry.build(entry.runner_spec(info))
