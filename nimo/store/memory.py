"""``MemoryStore``: the ``Store`` contract in a process's memory (tests and dry runs).

It keeps records, not rows: every method returns frozen copies, and JSON-like fields go
through ``convert.jsonable`` as the SQL store's JSON columns do, so both hand back the same
values.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nimo.records import (
    CampaignInfo,
    CampaignStatus,
    IterationRecord,
    RunOutcome,
    RunPurpose,
    RunRequest,
    RunStatus,
    StoredRun,
    interrupted_reason,
)
from nimo.store import convert
from nimo.store.base import Store, campaign_kind, check_finished, name_taken, no_campaign
from nimo.store.objects import MemoryHostObjects
from nimo.store.types import Lease, ModelVersion, Owner


@dataclass
class _Campaign:
    info: CampaignInfo
    runs: dict[int, StoredRun] = field(default_factory=dict)
    iterations: dict[int, IterationRecord] = field(default_factory=dict)
    models: list[ModelVersion] = field(default_factory=list)


class MemoryStore(MemoryHostObjects, Store):
    """``Store`` in dictionaries guarded by one lock; nothing survives the process."""

    def __init__(self, url: str = "memory://") -> None:
        self.url = url
        self._lock = threading.RLock()
        self._campaigns: dict[str, _Campaign] = {}
        self._leases: dict[str, Lease] = {}
        self._lease_log: list[Lease] = []
        self._owners: dict[str, Owner] = {}
        self._claims: dict[str, str] = {}  # campaign -> owner id

    def _get(self, name: str) -> _Campaign:
        found = self._campaigns.get(name)
        if found is None:
            raise no_campaign(name, self.url, list(self._campaigns))
        return found

    def _update(self, c: _Campaign, **changes: Any) -> CampaignInfo:
        c.info = dataclasses.replace(c.info, updated_at=time.time(), **changes)
        return c.info

    # -- campaigns -------------------------------------------------------------------
    def create_campaign(
        self, name: str, kind: str, *, design: Mapping[str, Any],
        spec: Mapping[str, Any] | None = None, seed: int = 0,
        status: str = CampaignStatus.CREATED,
    ) -> CampaignInfo:
        info = CampaignInfo(
            name=name, kind=campaign_kind(kind), status=CampaignStatus(status),
            design=convert.jsonable(design), spec=convert.jsonable(spec or {}),
            seed=int(seed), created_at=time.time(), updated_at=time.time(),
        )
        with self._lock:
            if name in self._campaigns:
                raise name_taken(name, self.url)
            self._campaigns[name] = _Campaign(info)
        return info

    def campaign(self, name: str) -> CampaignInfo:
        with self._lock:
            return self._get(name).info

    def campaigns(self, status: str | None = None) -> list[CampaignInfo]:
        with self._lock:
            return [c.info for c in self._campaigns.values()
                    if status is None or c.info.status == status]

    def set_status(
        self, name: str, status: str, *, stopped_because: str | None = None,
        expect: Iterable[str] | None = None,
    ) -> bool:
        new = CampaignStatus(status)
        with self._lock:
            c = self._get(name)
            if expect is not None and c.info.status not in set(expect):
                return False
            c.info.status.check(new, name)
            reason = c.info.stopped_because if stopped_because is None else stopped_because
            self._update(c, status=new, stopped_because=reason)
            return True

    def update_spec(self, name: str, **changes: Any) -> CampaignInfo:
        with self._lock:
            c = self._get(name)
            return self._update(c, spec={**c.info.spec, **convert.jsonable(changes)})

    def delete_campaign(self, name: str) -> int:
        with self._lock:
            n = len(self._get(name).runs)
            del self._campaigns[name]
            self._release({h for h, lease in self._leases.items() if lease.campaign == name},
                          time.time())
            self._claims.pop(name, None)
            return n

    # -- runs and samples ------------------------------------------------------------
    def queue_runs(self, name: str, requests: Iterable[RunRequest]) -> None:
        with self._lock:
            c = self._get(name)
            for req in requests:
                old = c.runs.get(req.run)
                if old is None:
                    c.runs[req.run] = _queued(req)
                elif old.status is RunStatus.INTERRUPTED:
                    old.status.check(RunStatus.QUEUED, req.run)
                    c.runs[req.run] = dataclasses.replace(
                        _queued(req), attempts=old.attempts + 1, host=old.host,
                        started_at=old.started_at, ended_at=old.ended_at,
                        overhead_s=old.overhead_s)

    def record_outcome(self, name: str, outcome: RunOutcome) -> None:
        check_finished(outcome)
        req = outcome.request
        with self._lock:
            c = self._get(name)
            old = c.runs.get(req.run)
            if old is not None:
                old.status.check(outcome.status, req.run)
            sample = outcome.sample
            if sample is not None:
                sample = dataclasses.replace(
                    sample, assignment=convert.assignment_values(req.assignment),
                    profile=convert.jsonable(sample.profile), meta=convert.jsonable(sample.meta))
            c.runs[req.run] = StoredRun(
                run=req.run, assignment=convert.assignment_values(req.assignment),
                purpose=RunPurpose(req.purpose), predictor=req.predictor, status=outcome.status,
                reason=outcome.reason, attempts=old.attempts if old else 1, host=outcome.host,
                started_at=outcome.started_at, ended_at=outcome.ended_at,
                overhead_s=float(outcome.overhead_s), sample=sample,
            )

    def runs(self, name: str) -> list[StoredRun]:
        with self._lock:
            c = self._get(name)
            return [c.runs[k] for k in sorted(c.runs)]

    def interrupt_in_flight(self, name: str) -> list[StoredRun]:
        with self._lock:
            c = self._get(name)
            hit = [r for r in c.runs.values() if r.status is RunStatus.QUEUED]
            for r in hit:
                self._set_run(c, r, RunStatus.INTERRUPTED, interrupted_reason())
            return [c.runs[r.run] for r in sorted(hit, key=lambda r: r.run)]

    def reopen_runs(self, name: str, runs: Iterable[int]) -> None:
        with self._lock:
            c = self._get(name)
            for run in set(runs):
                r = c.runs.get(run)
                if r is not None and r.status is RunStatus.FAILED:
                    self._set_run(c, r, RunStatus.INTERRUPTED, interrupted_reason(r.reason))

    def _set_run(self, c: _Campaign, r: StoredRun, status: RunStatus, reason: str) -> None:
        r.status.check(status, r.run)
        c.runs[r.run] = dataclasses.replace(r, status=status, reason=reason)

    # -- iteration records and models ------------------------------------------------
    def record_iteration(self, name: str, record: IterationRecord) -> None:
        with self._lock:
            self._get(name).iterations[record.run] = convert.iteration(
                convert.jsonable(record.to_dict()))

    def iterations(self, name: str) -> list[IterationRecord]:
        with self._lock:
            found = self._get(name).iterations
            return [found[k] for k in sorted(found)]

    def save_model(self, name: str, run: int, model: Mapping[str, Any]) -> int:
        with self._lock:
            versions = self._get(name).models
            for i, v in enumerate(versions):
                if v.run == run:
                    versions[i] = dataclasses.replace(v, model=convert.jsonable(model))
                    return v.version
            version = max((v.version for v in versions), default=0) + 1
            versions.append(ModelVersion(version, run, convert.jsonable(model), time.time()))
            return version

    def models(self, name: str) -> list[ModelVersion]:
        with self._lock:
            return list(self._get(name).models)

    # -- owners ----------------------------------------------------------------------
    def register_owner(self, owner: Owner) -> Owner:
        with self._lock:
            now = time.time()
            self._owners[owner.id] = dataclasses.replace(owner, since=owner.since or now,
                                                         heartbeat_at=now)
            return self._owners[owner.id]

    def heartbeat(self, owner_id: str) -> bool:
        with self._lock:
            found = self._owners.get(owner_id)
            if found is None:
                return False
            self._owners[owner_id] = dataclasses.replace(found, heartbeat_at=time.time())
            return True

    def drop_owner(self, owner_id: str) -> None:
        with self._lock:
            self._drop({owner_id}, time.time())

    def _drop(self, dead: set[str], now: float) -> None:
        for oid in dead:
            self._owners.pop(oid, None)
        self._claims = {c: o for c, o in self._claims.items() if o not in dead}
        gone = {h for h, lease in self._leases.items() if lease.owner in dead}
        self._release(gone, now)

    def _reap(self, stale_s: float) -> None:
        now = time.time()
        dead = {o.id for o in self._owners.values() if o.heartbeat_at < now - stale_s}
        dead |= {lease.owner for lease in self._leases.values()
                 if lease.owner not in self._owners}
        self._drop(dead, now)

    def claim_campaign(self, name: str, owner_id: str, stale_s: float) -> Owner | None:
        with self._lock:
            self._reap(stale_s)
            holder = self._claims.setdefault(name, owner_id)
            return None if holder == owner_id else self._owners[holder]

    def release_campaign(self, name: str, owner_id: str) -> None:
        with self._lock:
            if self._claims.get(name) == owner_id:
                del self._claims[name]

    def campaign_owner(self, name: str) -> Owner | None:
        with self._lock:
            holder = self._claims.get(name)
            return None if holder is None else self._owners.get(holder)

    # -- host leases -----------------------------------------------------------------
    def acquire_hosts(self, campaign: str, hosts: Iterable[str], owner: str,
                      stale_s: float | None = None) -> bool:
        with self._lock:
            if stale_s is not None:
                self._reap(stale_s)
            wanted = [h for h in sorted(set(hosts)) if not (
                h in self._leases and (self._leases[h].campaign, self._leases[h].owner)
                == (campaign, owner))]
            if any(h in self._leases for h in wanted):
                return False
            now = time.time()
            for host in wanted:
                self._leases[host] = Lease(host, campaign, owner, now)
                self._lease_log.append(Lease(host, campaign, owner, now))
            return True

    def release_hosts(self, campaign: str, owner: str | None = None) -> list[str]:
        with self._lock:
            hosts = [h for h, lease in self._leases.items() if lease.campaign == campaign
                     and (owner is None or lease.owner == owner)]
            self._release(set(hosts), time.time())
            return hosts

    def _release(self, hosts: set[str], now: float) -> None:
        """Free ``hosts`` and close their open lease-log entries."""
        held = {(h, self._leases[h].campaign) for h in hosts if h in self._leases}
        for h in hosts:
            self._leases.pop(h, None)
        self._lease_log = [
            dataclasses.replace(lg, released_at=now)
            if lg.released_at is None and (lg.host, lg.campaign) in held else lg
            for lg in self._lease_log
        ]

    def leases(self) -> list[Lease]:
        with self._lock:
            return [self._leases[h] for h in sorted(self._leases)]

    def lease_log(self) -> list[Lease]:
        with self._lock:
            return list(self._lease_log)


def _queued(req: RunRequest) -> StoredRun:
    return StoredRun(run=req.run, assignment=convert.assignment_values(req.assignment),
                     purpose=RunPurpose(req.purpose), predictor=req.predictor,
                     status=RunStatus.QUEUED)
