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
