"""The SQL store: SQLite file by default, PostgreSQL by URL (psycopg 3).

Every public method runs in one ``session_scope()`` (commit, or roll back and raise
``StoreError``), so a finished run and its sample are durable when the call returns.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlmodel import Session, SQLModel, select

from nimo.errors import StoreError, one_line
from nimo.records import IterationRecord, RunOutcome, RunRequest, RunStatus, Sample
from nimo.store import tables as t
from nimo.store.types import (
    INTERRUPTED,
    KINDS,
    CampaignInfo,
    Lease,
    ModelVersion,
    StoredRun,
)

DEFAULT_URL = "sqlite:///./nimo.db"
_ORDER = [s for s in RunStatus if not s.finished]


def default_url() -> str:
    """``$NIMO_STORE_URL`` or the SQLite file ``./nimo.db`` next to the user's work."""
    return os.environ.get("NIMO_STORE_URL") or DEFAULT_URL


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` go through the psycopg 3 driver."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def mask_url(url: str) -> str:
    """The URL with its password replaced by ``***``."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def check_transition(run: int, old: RunStatus, old_reason: str | None, new: RunStatus) -> None:
    """Guard of the run lifecycle (see ``RunStatus``): forward only; a finished run stays
    finished, except one failed as ``interrupted``, which may be run again."""
    if old.finished:
        if old is RunStatus.FAILED and (old_reason or "").startswith(INTERRUPTED):
            return
        raise StoreError(f"run {run} is already {old.value}; it cannot become {new.value}")
    if not new.finished and _ORDER.index(new) < _ORDER.index(old):
        raise StoreError(f"run {run} cannot go back from {old.value} to {new.value}")


def _key(assignment: Mapping[str, float]) -> str:
    return json.dumps({k: float(v) for k, v in sorted(assignment.items())}, sort_keys=True)



class SqlStore:
    """Campaigns, runs, samples, iteration records, model versions and host leases."""

    def __init__(self, url: str | None = None) -> None:
        raw = url or default_url()
        self.url = mask_url(raw)
        try:
            sa_url = normalise_url(raw)
            is_sqlite = sa_url.startswith("sqlite")
            args: dict[str, Any] = {"timeout": 60, "check_same_thread": False} if is_sqlite else {
                "connect_timeout": 10
            }
            self.engine: Engine = create_engine(sa_url, connect_args=args, pool_pre_ping=True)
            if is_sqlite:
                event.listen(self.engine, "connect", _sqlite_pragmas)
            SQLModel.metadata.create_all(self.engine)
        except (SQLAlchemyError, ArgumentError, ValueError, ModuleNotFoundError) as e:
            raise StoreError(f"cannot open store {self.url}: {one_line(e)}") from e

    # -- plumbing --------------------------------------------------------------------
    @contextmanager
    def session_scope(self) -> Iterator[Session]:
        session = Session(self.engine, expire_on_commit=False)
        try:
            yield session
            session.commit()
        except SQLAlchemyError as e:
            session.rollback()
            raise StoreError(f"store {self.url}: {one_line(e)}") from e
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> SqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _campaign(self, s: Session, name: str) -> t.CampaignRow:
        row = s.exec(select(t.CampaignRow).where(t.CampaignRow.name == name)).first()
        if row is None:
            names = s.exec(select(t.CampaignRow.name).order_by(t.CampaignRow.id)).all()
            hint = "known: " + ", ".join(names[-10:]) if names else "the store is empty"
            raise StoreError(f"no campaign named {name!r} in {self.url}", hint=hint)
        return row

    # -- campaigns -------------------------------------------------------------------
    def create_campaign(
        self,
        name: str,
        kind: str,
        *,
        design: Mapping[str, Any],
        spec: Mapping[str, Any] | None = None,
        seed: int = 0,
        status: str = "created",
    ) -> CampaignInfo:
        if kind not in KINDS:
            raise StoreError(f"unknown campaign kind {kind!r}", hint="valid: " + ", ".join(KINDS))
        now = time.time()
        row = t.CampaignRow(
            name=name, kind=kind, status=status, design=_jsonable(design),
            spec=_jsonable(spec or {}), seed=int(seed), created_at=now, updated_at=now,
        )
        try:
            with self.session_scope() as s:
                s.add(row)
                s.flush()
                return _campaign_info(row)
        except StoreError as e:
            if isinstance(e.__cause__, IntegrityError):
                raise StoreError(
                    f"a campaign named {name!r} already exists in {self.url}",
                    hint="choose another --name or resume it",
                ) from None
            raise

    def campaign(self, name: str) -> CampaignInfo:
        with self.session_scope() as s:
            return _campaign_info(self._campaign(s, name))

    def campaigns(self, status: str | None = None) -> list[CampaignInfo]:
        with self.session_scope() as s:
            q = select(t.CampaignRow).order_by(t.CampaignRow.id)
            if status is not None:
                q = q.where(t.CampaignRow.status == status)
            return [_campaign_info(r) for r in s.exec(q).all()]

    def set_status(
        self, name: str, status: str, *, stopped_because: str | None = None,
        expect: Iterable[str] | None = None,
    ) -> bool:
        """Set the campaign's status; with ``expect``, only if it currently is one of them
        (atomic compare-and-set, returns whether it changed)."""
        with self.session_scope() as s:
            row = self._campaign(s, name)
            if expect is not None and row.status not in set(expect):
                return False
            row.status = status
            if stopped_because is not None:
                row.stopped_because = stopped_because
            row.updated_at = time.time()
            s.add(row)
            return True

    def update_spec(self, name: str, **changes: Any) -> CampaignInfo:
        with self.session_scope() as s:
            row = self._campaign(s, name)
            row.spec = {**row.spec, **_jsonable(changes)}
            row.updated_at = time.time()
            s.add(row)
            return _campaign_info(row)

    # -- runs and samples ------------------------------------------------------------
    def _assignment_id(self, s: Session, cid: int, assignment: Mapping[str, float]) -> int:
        key = _key(assignment)
        row = s.exec(
            select(t.AssignmentRow).where(
                t.AssignmentRow.campaign_id == cid, t.AssignmentRow.key == key
            )
        ).first()
        if row is None:
            row = t.AssignmentRow(
                campaign_id=cid, key=key, values={k: float(v) for k, v in assignment.items()}
            )
            s.add(row)
            s.flush()
        assert row.id is not None
        return row.id

    def _run_row(self, s: Session, cid: int, run: int) -> t.RunRow | None:
        return s.exec(
            select(t.RunRow).where(t.RunRow.campaign_id == cid, t.RunRow.run == run)
        ).first()

    def queue_runs(self, name: str, requests: Iterable[RunRequest]) -> None:
        """Record requests as queued; runs already stored are left alone, except one
        interrupted, which is queued again (its attempts counted)."""
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            assert cid is not None
            for req in requests:
                row = self._run_row(s, cid, req.run)
                if row is None:
                    row = t.RunRow(
                        campaign_id=cid, run=req.run, purpose=req.purpose,
                        assignment_id=self._assignment_id(s, cid, req.assignment),
                        predictor=req.predictor, status=RunStatus.QUEUED.value,
                        updated_at=time.time(),
                    )
                elif row.status == RunStatus.FAILED.value and (row.reason or "").startswith(
                    INTERRUPTED
                ):
                    row.assignment_id = self._assignment_id(s, cid, req.assignment)
                    row.status, row.reason = RunStatus.QUEUED.value, None
                    row.attempts += 1
                    row.updated_at = time.time()
                else:
                    continue
                s.add(row)

    def mark_run(
        self, name: str, run: int, status: RunStatus, *, reason: str | None = None,
        host: str | None = None,
    ) -> None:
        """Move a run along its lifecycle (guarded by ``check_transition``)."""
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            row = self._run_row(s, cid, run) if cid is not None else None
            if row is None:
                raise StoreError(f"campaign {name!r} has no run {run}")
            check_transition(run, RunStatus(row.status), row.reason, status)
            row.status, row.reason = status.value, reason
            if host is not None:
                row.host = host
            if status is RunStatus.SETTING_UP and row.started_at is None:
                row.started_at = time.time()
            row.updated_at = time.time()
            s.add(row)

    def record_outcome(self, name: str, outcome: RunOutcome) -> None:
        """Store a finished run and its sample in one transaction. A run already finished
        (other than interrupted) raises ``StoreError``: no sample is ever duplicated."""
        if not outcome.status.finished:
            raise StoreError(f"run {outcome.request.run} is not finished ({outcome.status.value})")
        req = outcome.request
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            assert cid is not None
            row = self._run_row(s, cid, req.run)
            if row is None:
                row = t.RunRow(
                    campaign_id=cid, run=req.run, assignment_id=0, purpose=req.purpose,
                    status=RunStatus.QUEUED.value, updated_at=time.time(),
                )
            else:
                check_transition(req.run, RunStatus(row.status), row.reason, outcome.status)
                old = s.exec(
                    select(t.SampleRow).where(t.SampleRow.run_id == row.id)
                ).first()
                if old is not None:
                    s.delete(old)
                    s.flush()
            row.assignment_id = self._assignment_id(s, cid, req.assignment)
            row.purpose, row.predictor = req.purpose, req.predictor
            row.status, row.reason = outcome.status.value, outcome.reason
            row.host, row.overhead_s = outcome.host, float(outcome.overhead_s)
            row.started_at, row.ended_at = outcome.started_at, outcome.ended_at
            row.updated_at = time.time()
            s.add(row)
            s.flush()
            if outcome.sample is not None:
                s.add(_sample_row(cid, req.run, row.id, outcome.sample))

    def runs(self, name: str) -> list[StoredRun]:
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            rows = s.exec(
                select(t.RunRow, t.AssignmentRow, t.SampleRow)
                .join(t.AssignmentRow, t.AssignmentRow.id == t.RunRow.assignment_id)
                .outerjoin(t.SampleRow, t.SampleRow.run_id == t.RunRow.id)
                .where(t.RunRow.campaign_id == cid)
                .order_by(t.RunRow.run)
            ).all()
            return [_stored_run(r, a, smp) for r, a, smp in rows]

    def outcomes(self, name: str) -> dict[int, RunOutcome]:
        """Finished-for-good outcomes by run number (what a resumed campaign replays)."""
        return {r.run: r.outcome() for r in self.runs(name) if r.final}

    def interrupt_in_flight(self, name: str) -> list[StoredRun]:
        """Mark runs left unfinished by a crash as failed ``interrupted``; returns them."""
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            rows = s.exec(
                select(t.RunRow).where(
                    t.RunRow.campaign_id == cid,
                    t.RunRow.status.in_([st.value for st in _ORDER]),  # type: ignore[attr-defined]
                )
            ).all()
            for row in rows:
                row.status, row.reason, row.updated_at = "failed", INTERRUPTED, time.time()
                s.add(row)
            hit = {row.run for row in rows}
        return [r for r in self.runs(name) if r.run in hit]

    def reopen_runs(self, name: str, runs: Iterable[int]) -> None:
        """Let failed runs be run again by a resume (reason becomes ``interrupted (...)``)."""
        wanted = set(runs)
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            for row in s.exec(select(t.RunRow).where(t.RunRow.campaign_id == cid)).all():
                if row.run in wanted and row.status == RunStatus.FAILED.value:
                    if not (row.reason or "").startswith(INTERRUPTED):
                        row.reason = f"{INTERRUPTED} ({row.reason})"
                    row.updated_at = time.time()
                    s.add(row)

    def samples(self, name: str) -> list[tuple[int, Sample]]:
        return [(r.run, r.sample) for r in self.runs(name) if r.sample is not None]

    # -- iteration records and models ------------------------------------------------
    def record_iteration(self, name: str, record: IterationRecord) -> None:
        """Upsert the convergence-log line of ``record.run``."""
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            assert cid is not None
            row = s.exec(
                select(t.IterationRow).where(
                    t.IterationRow.campaign_id == cid, t.IterationRow.run == record.run
                )
            ).first() or t.IterationRow(campaign_id=cid, run=record.run, acquisition_s=0.0)
            row.acquisition_s = float(record.acquisition_s)
            row.internal_error_pct = record.internal_error_pct
            row.external_mape_pct = record.external_mape_pct
            row.record = _jsonable(record.to_dict())
            s.add(row)

    def iterations(self, name: str) -> list[IterationRecord]:
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            rows = s.exec(
                select(t.IterationRow)
                .where(t.IterationRow.campaign_id == cid)
                .order_by(t.IterationRow.run)
            ).all()
            return [_iteration(r.record) for r in rows]

    def save_model(self, name: str, run: int, model: Mapping[str, Any]) -> int:
        """Store the model as it stood after ``run``; idempotent per run. Returns its version."""
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            rows = s.exec(select(t.ModelRow).where(t.ModelRow.campaign_id == cid)).all()
            for row in rows:
                if row.run == run:
                    row.model = _jsonable(model)
                    s.add(row)
                    return row.version
            version = max((r.version for r in rows), default=0) + 1
            s.add(t.ModelRow(
                campaign_id=cid, version=version, run=run, model=_jsonable(model),
                created_at=time.time(),
            ))
            return version

    def models(self, name: str) -> list[ModelVersion]:
        with self.session_scope() as s:
            cid = self._campaign(s, name).id
            rows = s.exec(
                select(t.ModelRow).where(t.ModelRow.campaign_id == cid).order_by(t.ModelRow.version)
            ).all()
            return [ModelVersion(r.version, r.run, r.model, r.created_at) for r in rows]

    def model(self, name: str, version: int | None = None) -> ModelVersion:
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

    # -- host leases -----------------------------------------------------------------
    def acquire_hosts(self, campaign: str, hosts: Iterable[str], owner: str) -> bool:
        """Lease all ``hosts`` to ``campaign`` in one transaction, or none of them."""
        wanted = sorted(set(hosts))
        try:
            with self.session_scope() as s:
                rows = [t.LeaseRow(host=h, campaign=campaign, owner=owner, acquired_at=0.0)
                        for h in wanted]
                s.add_all(rows)
                s.flush()  # holds the write lock from here: timestamps are ordered
                now = time.time()
                for row in rows:
                    row.acquired_at = now
                for host in wanted:
                    s.add(t.LeaseLogRow(host=host, campaign=campaign, owner=owner, acquired_at=now))
        except StoreError as e:
            if isinstance(e.__cause__, IntegrityError):
                return False
            raise
        return True

    def release_hosts(self, campaign: str, owner: str | None = None) -> list[str]:
        with self.session_scope() as s:
            q = select(t.LeaseRow).where(t.LeaseRow.campaign == campaign)
            if owner is not None:
                q = q.where(t.LeaseRow.owner == owner)
            rows = s.exec(q).all()
            hosts = [r.host for r in rows]
            for r in rows:
                s.delete(r)
            s.flush()
            now = time.time()
            for log in s.exec(
                select(t.LeaseLogRow).where(
                    t.LeaseLogRow.campaign == campaign,
                    t.LeaseLogRow.released_at.is_(None),  # type: ignore[union-attr]
                )
            ).all():
                if log.host in hosts:
                    log.released_at = now
                    s.add(log)
            return hosts

    def leases(self) -> list[Lease]:
        with self.session_scope() as s:
            rows = s.exec(select(t.LeaseRow).order_by(t.LeaseRow.host)).all()
            return [Lease(r.host, r.campaign, r.owner, r.acquired_at) for r in rows]

    def lease_log(self) -> list[Lease]:
        with self.session_scope() as s:
            rows = s.exec(select(t.LeaseLogRow).order_by(t.LeaseLogRow.id)).all()
            return [Lease(r.host, r.campaign, r.owner, r.acquired_at, r.released_at) for r in rows]


# -- conversions ---------------------------------------------------------------------
def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _jsonable(value: Any) -> Any:
    """Plain JSON types (tuples -> lists, numpy scalars -> floats)."""
    return json.loads(json.dumps(value, default=_default))


def _default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    if hasattr(o, "value"):
        return o.value
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _campaign_info(r: t.CampaignRow) -> CampaignInfo:
    return CampaignInfo(
        name=r.name, kind=r.kind, status=r.status, design=dict(r.design or {}),
        spec=dict(r.spec or {}), seed=r.seed, stopped_because=r.stopped_because,
        created_at=r.created_at, updated_at=r.updated_at,
    )


def _sample_row(cid: int, run: int, run_id: int | None, smp: Sample) -> t.SampleRow:
    assert run_id is not None
    d = _jsonable(smp.to_dict())
    return t.SampleRow(
        campaign_id=cid, run=run, run_id=run_id, T=d["T"], D=d["D"], U=d["U"],
        o_a=d["o_a"], o_n=d["o_n"], o_d=d["o_d"], cost_s=d["cost_s"],
        profile=d["profile"], meta=d["meta"],
    )


def _stored_run(r: t.RunRow, a: t.AssignmentRow, smp: t.SampleRow | None) -> StoredRun:
    sample = None
    if smp is not None:
        sample = Sample(
            assignment={k: float(v) for k, v in a.values.items()}, T=smp.T, D=smp.D, U=smp.U,
            o_a=smp.o_a, o_n=smp.o_n, o_d=smp.o_d, cost_s=smp.cost_s,
            profile=dict(smp.profile or {}), meta=dict(smp.meta or {}),
        )
    return StoredRun(
        run=r.run, assignment={k: float(v) for k, v in a.values.items()}, purpose=r.purpose,
        predictor=r.predictor, status=RunStatus(r.status), reason=r.reason, attempts=r.attempts,
        host=r.host, started_at=r.started_at, ended_at=r.ended_at, overhead_s=r.overhead_s,
        sample=sample,
    )


_RECORD_FIELDS = (
    "run", "assignment", "purpose", "predictor", "attributes", "acquisition_s",
    "internal_error_pct", "external_mape_pct", "status", "reason",
)


def _iteration(d: Mapping[str, Any]) -> IterationRecord:
    return IterationRecord(
        run=int(d["run"]),
        assignment=dict(d.get("assignment") or {}),
        purpose=d.get("purpose", ""),
        predictor=d.get("predictor"),
        attributes={k: tuple(v) for k, v in (d.get("attributes") or {}).items()},
        acquisition_s=float(d.get("acquisition_s") or 0.0),
        internal_error_pct=d.get("internal_error_pct"),
        status=d.get("status") or "done",
        reason=d.get("reason"),
        external_mape_pct=d.get("external_mape_pct"),
        extra={k: v for k, v in d.items() if k not in _RECORD_FIELDS},
    )
