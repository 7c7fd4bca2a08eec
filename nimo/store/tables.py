"""SQLModel tables of the campaign store. Imported only by ``nimo.store.sql``.

Table names carry the ``nimo_`` prefix: the database may hold other tables.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field, SQLModel


class CampaignRow(SQLModel, table=True):
    __tablename__ = "nimo_campaigns"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True, max_length=200)
    kind: str
    status: str
    design: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    spec: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    seed: int = 0
    stopped_because: str | None = None
    created_at: float
    updated_at: float


class AssignmentRow(SQLModel, table=True):
    __tablename__ = "nimo_assignments"
    __table_args__ = (UniqueConstraint("campaign_id", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="nimo_campaigns.id", index=True)
    key: str
    values: dict[str, float] = Field(default_factory=dict, sa_column=Column(JSON))


class RunRow(SQLModel, table=True):
    __tablename__ = "nimo_runs"
    __table_args__ = (UniqueConstraint("campaign_id", "run"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="nimo_campaigns.id", index=True)
    run: int
    assignment_id: int = Field(foreign_key="nimo_assignments.id")
    purpose: str
    predictor: str | None = None
    status: str
    reason: str | None = None
    attempts: int = 1
    host: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    overhead_s: float = 0.0
    updated_at: float


class SampleRow(SQLModel, table=True):
    __tablename__ = "nimo_samples"
    __table_args__ = (UniqueConstraint("campaign_id", "run"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="nimo_campaigns.id", index=True)
    run: int
    run_id: int = Field(foreign_key="nimo_runs.id", unique=True)
    T: float
    D: float | None = None
    U: float | None = None
    o_a: float | None = None
    o_n: float | None = None
    o_d: float | None = None
    cost_s: float | None = None
    profile: dict[str, float] = Field(default_factory=dict, sa_column=Column(JSON))
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))


class IterationRow(SQLModel, table=True):
    __tablename__ = "nimo_iterations"
    __table_args__ = (UniqueConstraint("campaign_id", "run"),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="nimo_campaigns.id", index=True)
    run: int
    acquisition_s: float
    internal_error_pct: float | None = None
    external_mape_pct: float | None = None
    record: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))


class ModelRow(SQLModel, table=True):
    __tablename__ = "nimo_models"
    __table_args__ = (
        UniqueConstraint("campaign_id", "version"),
        UniqueConstraint("campaign_id", "run"),
    )

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="nimo_campaigns.id", index=True)
    version: int
    run: int
    model: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    created_at: float


class LeaseRow(SQLModel, table=True):
    """A held host: the primary key makes acquiring it atomic."""

    __tablename__ = "nimo_host_leases"

    host: str = Field(primary_key=True, max_length=200)
    campaign: str
    owner: str
    acquired_at: float


class LeaseLogRow(SQLModel, table=True):
    """History of leases, for audit (and for tests proving no host was shared)."""

    __tablename__ = "nimo_lease_log"

    id: int | None = Field(default=None, primary_key=True)
    host: str = Field(index=True)
    campaign: str
    owner: str
    acquired_at: float
    released_at: float | None = None


class OwnerRow(SQLModel, table=True):
    """A process running campaigns; alive while ``heartbeat_at`` (the store's clock) is
    fresh. Schema version 3."""

    __tablename__ = "nimo_owners"

    id: str = Field(primary_key=True, max_length=200)
    host: str
    pid: int
    since: float
    heartbeat_at: float


class ClaimRow(SQLModel, table=True):
    """The one owner of a campaign: the primary key makes claiming it atomic. Version 3."""

    __tablename__ = "nimo_campaign_claims"

    campaign: str = Field(primary_key=True, max_length=200)
    owner: str = Field(index=True)
    since: float
