"""The ``Store`` contract: what the campaign loop, the service and the CLI ask of a store.

Two stores implement it: ``SqlStore`` (SQLite or PostgreSQL) and ``MemoryStore`` (tests and
dry runs). Both hand out frozen records and guard every lifecycle change with
``RunStatus.check`` and ``CampaignStatus.check``; ``nimo.store.testing.StoreContract`` checks
that they behave alike.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nimo.errors import StoreError
from nimo.records import (
    CampaignInfo,
    CampaignKind,
    CampaignStatus,
    IterationRecord,
    RunOutcome,
    RunRequest,
    Sample,
    StoredRun,
)
from nimo.store.objects import HostObject
from nimo.store.types import Lease, ModelVersion, Owner


class Store(abc.ABC):
    """Campaigns, runs, samples, convergence log, model versions and host leases.

    Every write is durable when the call returns: a finished run and its sample are
    committed before the next experiment starts.
    """

    url: str

    # -- campaigns -------------------------------------------------------------------
    @abc.abstractmethod
    def create_campaign(
        self, name: str, kind: str, *, design: Mapping[str, Any],
        spec: Mapping[str, Any] | None = None, seed: int = 0,
        status: str = CampaignStatus.CREATED,
    ) -> CampaignInfo:
        """Add a campaign; ``StoreError`` if the name is taken or the kind unknown."""

    @abc.abstractmethod
    def campaign(self, name: str) -> CampaignInfo:
        """The campaign named ``name``; ``StoreError`` naming the known ones if none."""

    @abc.abstractmethod
    def campaigns(self, status: str | None = None) -> list[CampaignInfo]:
        """Every campaign (with ``status``, only those), oldest first."""

    @abc.abstractmethod
    def set_status(
        self, name: str, status: str, *, stopped_because: str | None = None,
        expect: Iterable[str] | None = None,
    ) -> bool:
        """Set the campaign's status; with ``expect``, only if it currently is one of them
        (atomic compare-and-set, returns whether it changed)."""

    @abc.abstractmethod
    def update_spec(self, name: str, **changes: Any) -> CampaignInfo:
        """Merge ``changes`` into the campaign's spec."""

    @abc.abstractmethod
    def delete_campaign(self, name: str) -> int:
        """Delete the campaign with its runs, samples, log, models and leases; returns the
        number of runs deleted (``StoreError`` if there is no such campaign)."""

    # -- runs and samples ------------------------------------------------------------
    @abc.abstractmethod
    def queue_runs(self, name: str, requests: Iterable[RunRequest]) -> None:
        """Record requests as queued; runs already stored are left alone, except one
        interrupted, which is queued again (its attempts counted)."""

    @abc.abstractmethod
    def record_outcome(self, name: str, outcome: RunOutcome) -> None:
        """Store a finished run and its sample at once. A run already finished raises
        ``StoreError``: no sample is ever duplicated."""

    @abc.abstractmethod
    def runs(self, name: str) -> list[StoredRun]:
        """The campaign's runs by run number."""

    @abc.abstractmethod
    def interrupt_in_flight(self, name: str) -> list[StoredRun]:
        """Mark the runs a crash left queued as interrupted; returns them."""

    @abc.abstractmethod
    def reopen_runs(self, name: str, runs: Iterable[int]) -> None:
        """Let failed runs be run again by a resume (they become interrupted)."""

    def outcomes(self, name: str) -> dict[int, RunOutcome]:
        """Finished-for-good outcomes by run number (what a resumed campaign replays)."""
        return {r.run: r.outcome() for r in self.runs(name) if r.final}

    def samples(self, name: str) -> list[tuple[int, Sample]]:
        return [(r.run, r.sample) for r in self.runs(name) if r.sample is not None]

    # -- iteration records and models ------------------------------------------------
    @abc.abstractmethod
    def record_iteration(self, name: str, record: IterationRecord) -> None:
        """Upsert the convergence-log line of ``record.run``."""

    @abc.abstractmethod
    def iterations(self, name: str) -> list[IterationRecord]:
        """The convergence log by run number."""

    @abc.abstractmethod
    def save_model(self, name: str, run: int, model: Mapping[str, Any]) -> int:
        """Store the model as it stood after ``run``; idempotent per run. Returns its version."""

    @abc.abstractmethod
    def models(self, name: str) -> list[ModelVersion]:
        """Every model version, oldest first."""

    def model(self, name: str, version: int | None = None) -> ModelVersion:
        """Model version ``version`` (default: the latest)."""
        versions = self.models(name)
        if not versions:
            raise StoreError(f"campaign {name!r} has no model yet")
        if version is None:
            return versions[-1]
        for v in versions:
            if v.version == version:
                return v
        raise StoreError(
            f"campaign {name!r} has no model version {version}",
            hint=f"valid: 1..{versions[-1].version}",
        )

    # -- owners: one process per campaign, alive by its heartbeat ---------------------
    @abc.abstractmethod
    def register_owner(self, owner: Owner) -> Owner:
        """Record a running process (its heartbeat now, by the store's clock)."""

    @abc.abstractmethod
    def heartbeat(self, owner_id: str) -> bool:
        """Renew the owner's heartbeat; False if it was declared dead (its row reaped): its
        claims and leases are gone and it must stop."""

    @abc.abstractmethod
    def drop_owner(self, owner_id: str) -> None:
        """Release everything the owner holds (claims, host leases) and forget it."""

    @abc.abstractmethod
    def claim_campaign(self, name: str, owner_id: str, stale_s: float) -> Owner | None:
        """Make ``owner_id`` the one process running campaign ``name``, atomically: None when
        it holds the claim now (also when it already did), else the live holder. Owners whose
        heartbeat is older than ``stale_s`` are reaped first (claims and leases released)."""

    @abc.abstractmethod
    def release_campaign(self, name: str, owner_id: str) -> None:
        """Drop ``owner_id``'s claim on ``name`` (no-op if it holds none)."""

    @abc.abstractmethod
    def campaign_owner(self, name: str) -> Owner | None:
        """The owner holding ``name``'s claim (alive or not), or None."""

    # -- host leases -----------------------------------------------------------------
    @abc.abstractmethod
    def acquire_hosts(self, campaign: str, hosts: Iterable[str], owner: str,
                      stale_s: float | None = None) -> bool:
        """Lease all ``hosts`` to ``campaign`` at once, or none of them. Hosts already leased
        to this campaign by this owner count as acquired. With ``stale_s``, owners whose
        heartbeat is older (and leases of unregistered owners) are reaped first."""

    def lease_holders(self, hosts: Iterable[str]) -> list[Lease]:
        """The current leases of ``hosts``."""
        wanted = set(hosts)
        return [lease for lease in self.leases() if lease.host in wanted]

    @abc.abstractmethod
    def release_hosts(self, campaign: str, owner: str | None = None) -> list[str]:
        """Release the campaign's leases (only ``owner``'s, if given); returns the hosts."""

    @abc.abstractmethod
    def leases(self) -> list[Lease]:
        """Hosts held now, by host name."""

    @abc.abstractmethod
    def lease_log(self) -> list[Lease]:
        """Every lease ever taken, oldest first, with its release time."""

    # -- host objects (nimo.store.objects) -------------------------------------------
    @abc.abstractmethod
    def record_host_object(self, obj: HostObject) -> None:
        """Record an object a run made on a host, as it is made."""

    @abc.abstractmethod
    def host_objects(self, campaign: str, host: str | None = None) -> list[HostObject]:
        """The campaign's recorded (not yet removed) objects, on ``host`` if given."""

    @abc.abstractmethod
    def forget_host_objects(self, campaign: str, host: str | None = None,
                            run_id: str | None = None) -> int:
        """Forget the campaign's removed objects (of ``host``, of ``run_id``); how many."""

    # -- plumbing --------------------------------------------------------------------
    def close(self) -> None:  # noqa: B027 - a store without connections has nothing to do
        """Release connections; idempotent."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def campaign_kind(kind: str) -> CampaignKind:
    """``kind`` as a ``CampaignKind``; ``StoreError`` naming the valid kinds otherwise."""
    try:
        return CampaignKind(kind)
    except ValueError:
        raise StoreError(f"unknown campaign kind {kind!r}",
                         hint="valid: " + ", ".join(CampaignKind)) from None


def no_campaign(name: str, url: str, known: Sequence[str]) -> StoreError:
    """The error for a campaign name the store does not hold (the last known ones hinted)."""
    hint = "known: " + ", ".join(known[-10:]) if known else "the store is empty"
    return StoreError(f"no campaign named {name!r} in {url}", hint=hint)


def name_taken(name: str, url: str) -> StoreError:
    return StoreError(f"a campaign named {name!r} already exists in {url}",
                      hint="choose another --name or resume it")


def check_finished(outcome: RunOutcome) -> None:
    """Only finished outcomes are recorded."""
    if not outcome.status.finished:
        raise StoreError(f"run {outcome.request.run} is not finished ({outcome.status.value})")

