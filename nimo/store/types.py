"""Frozen objects only the store hands out (never sqlmodel rows): model versions and host
leases. Campaigns and their runs are records (``nimo.records``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelVersion:
    """A cost model as it stood after ``run`` (``model`` is ``CostModel.to_dict()``)."""

    version: int
    run: int
    model: Mapping[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


@dataclass(frozen=True)
class Lease:
    """A host held by one campaign (``owner`` names the service instance)."""

    host: str
    campaign: str
    owner: str
    acquired_at: float
    released_at: float | None = None


@dataclass(frozen=True)
class Owner:
    """A process that runs campaigns (``nimo campaign run|resume`` or ``nimo serve``): it is
    alive while its ``heartbeat_at`` is fresh; its campaign claims and host leases die with it.
    ``id`` is unique per process; ``host`` is the machine name it reports."""

    id: str
    host: str
    pid: int
    since: float = 0.0
    heartbeat_at: float = 0.0

    def describe(self) -> str:
        """``host HOST pid PID since HH:MM:SS`` (UTC), for one-line refusals."""
        import time

        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        return f"host {self.host} pid {self.pid} since {since}"
