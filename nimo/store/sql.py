"""The SQL store: SQLite file by default, PostgreSQL by URL (psycopg 3).

Every public method runs in one ``session_scope()`` (commit, or roll back and raise
``StoreError``), so a finished run and its sample are durable when the call returns. Rows
are mapped to records in ``nimo.store.convert`` only.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine, delete, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlmodel import Session, SQLModel, col, select

from nimo.errors import StoreError, one_line
from nimo.records import (
    CampaignInfo,
    CampaignStatus,
    IterationRecord,
    RunOutcome,
    RunRequest,
    RunStatus,
    StoredRun,
    interrupted_reason,
)
from nimo.store import convert
from nimo.store import tables as t
from nimo.store.base import Store, campaign_kind, check_finished, name_taken, no_campaign
from nimo.store.objects import SqlHostObjects
from nimo.store.quiet import quiet_interrupted_cleanup
from nimo.store.schema import ensure_schema
from nimo.store.sql_owners import SqlOwnership
from nimo.store.types import ModelVersion
from nimo.store.urls import (
    create_private_file,
    default_url,
    mask_url,
    normalise_url,
    reader_uri,
    refuse_missing_file,
    scrub,
)

_WAL_TRIES = 200  # 10 s in steps of 50 ms


class SqlStore(SqlHostObjects, SqlOwnership, Store):
    """``Store`` in SQL tables (``nimo.store.tables``)."""

    def __init__(self, url: str | None = None, *, create: bool = True) -> None:
        """Open the store at ``url`` (default ``default_url()``), creating or upgrading its
        tables (``nimo.store.schema``). With ``create`` False (read-only commands) a SQLite
        file that does not exist, or a database without NIMO tables, is an error instead of
        a new empty store, and a current store is only read."""
        raw = url or default_url()
        self.url = mask_url(raw)
        try:
            sa_url = normalise_url(raw)
            if not create:
                refuse_missing_file(sa_url, self.url)
            elif sa_url.startswith("sqlite"):
                create_private_file(sa_url)  # 0600: a store holds hosts, specs and results
            uri = None if create else reader_uri(sa_url, self.url)
            self.engine: Engine = _engine(sa_url, wal=create, uri=uri)
            # an older store read by a user who may not upgrade it lacks later tables
            self.schema_found, self.absent_tables = ensure_schema(
                self.engine, lambda conn: SQLModel.metadata.create_all(conn), self.url,
                create=create, tables=list(SQLModel.metadata.tables),
                read_only=uri is not None)
        except (SQLAlchemyError, ArgumentError, ValueError, ModuleNotFoundError, OSError) as e:
            raise StoreError(f"cannot open store {self.url}: {scrub(one_line(e), raw)}") from e

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

    def _campaign(self, s: Session, name: str) -> t.CampaignRow:
        row = s.exec(select(t.CampaignRow).where(t.CampaignRow.name == name)).first()
        if row is None:
            names = s.exec(select(t.CampaignRow.name).order_by(col(t.CampaignRow.id))).all()
            raise no_campaign(name, self.url, names)
        return row

    def _cid(self, s: Session, name: str) -> int:
        cid = self._campaign(s, name).id
        assert cid is not None
        return cid

    # -- campaigns -------------------------------------------------------------------
    def create_campaign(
        self, name: str, kind: str, *, design: Mapping[str, Any],
        spec: Mapping[str, Any] | None = None, seed: int = 0,
        status: str = CampaignStatus.CREATED,
    ) -> CampaignInfo:
        now = time.time()
        row = t.CampaignRow(
            name=name, kind=campaign_kind(kind).value, status=CampaignStatus(status).value,
            design=convert.jsonable(design), spec=convert.jsonable(spec or {}), seed=int(seed),
            created_at=now, updated_at=now,
        )
        try:
            with self.session_scope() as s:
                s.add(row)
                s.flush()
                return convert.campaign_info(row)
        except StoreError as e:
            if isinstance(e.__cause__, IntegrityError):
                raise name_taken(name, self.url) from None
            raise

    def campaign(self, name: str) -> CampaignInfo:
        with self.session_scope() as s:
            return convert.campaign_info(self._campaign(s, name))

    def campaigns(self, status: str | None = None) -> list[CampaignInfo]:
        with self.session_scope() as s:
            q = select(t.CampaignRow).order_by(col(t.CampaignRow.id))
            if status is not None:
                q = q.where(t.CampaignRow.status == status)
            return [convert.campaign_info(r) for r in s.exec(q).all()]

    def set_status(
        self, name: str, status: str, *, stopped_because: str | None = None,
        expect: Iterable[str] | None = None,
    ) -> bool:
        new = CampaignStatus(status)
        with self.session_scope() as s:
            row = self._campaign(s, name)
            if expect is not None and row.status not in set(expect):
                return False
            CampaignStatus(row.status).check(new, name)
            row.status = new.value
            if stopped_because is not None:
                row.stopped_because = stopped_because
            row.updated_at = time.time()
            s.add(row)
            return True

    def update_spec(self, name: str, **changes: Any) -> CampaignInfo:
        with self.session_scope() as s:
            row = self._campaign(s, name)
            row.spec = {**row.spec, **convert.jsonable(changes)}
            row.updated_at = time.time()
            s.add(row)
            return convert.campaign_info(row)

    def delete_campaign(self, name: str) -> int:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            n = len(s.exec(select(t.RunRow.id).where(t.RunRow.campaign_id == cid)).all())
            for table in (t.SampleRow, t.ModelRow, t.IterationRow, t.RunRow, t.AssignmentRow):
                s.execute(delete(table).where(col(table.campaign_id) == cid))
            leased = s.exec(select(t.LeaseRow.host).where(t.LeaseRow.campaign == name)).all()
            self._close_log(s, [(h, name) for h in leased], time.time())
            s.execute(delete(t.LeaseRow).where(col(t.LeaseRow.campaign) == name))
            s.execute(delete(t.ClaimRow).where(col(t.ClaimRow.campaign) == name))
            s.execute(delete(t.CampaignRow).where(col(t.CampaignRow.id) == cid))
            return n

    # -- runs and samples ------------------------------------------------------------
    def _assignment_id(self, s: Session, cid: int, assignment: Mapping[str, float]) -> int:
        key = convert.assignment_key(assignment)
        row = s.exec(
            select(t.AssignmentRow).where(
                t.AssignmentRow.campaign_id == cid, t.AssignmentRow.key == key
            )
        ).first()
        if row is None:
            values = convert.assignment_values(assignment)
            row = t.AssignmentRow(campaign_id=cid, key=key, values=values)
            s.add(row)
            s.flush()
        assert row.id is not None
        return row.id

    def _run_row(self, s: Session, cid: int, run: int) -> t.RunRow | None:
        return s.exec(
            select(t.RunRow).where(t.RunRow.campaign_id == cid, t.RunRow.run == run)
        ).first()

    def queue_runs(self, name: str, requests: Iterable[RunRequest]) -> None:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            for req in requests:
                row = self._run_row(s, cid, req.run)
                if row is None:
                    row = t.RunRow(
                        campaign_id=cid, run=req.run, purpose=req.purpose,
                        assignment_id=self._assignment_id(s, cid, req.assignment),
                        predictor=req.predictor, status=RunStatus.QUEUED.stored,
                        updated_at=time.time(),
                    )
                elif convert.run_state(row) is RunStatus.INTERRUPTED:
                    row.assignment_id = self._assignment_id(s, cid, req.assignment)
                    convert.set_run_state(row, RunStatus.QUEUED, None)
                    row.attempts += 1
                    row.updated_at = time.time()
                else:
                    continue
                s.add(row)

    def record_outcome(self, name: str, outcome: RunOutcome) -> None:
        check_finished(outcome)
        req = outcome.request
        with self.session_scope() as s:
            cid = self._cid(s, name)
            row = self._run_row(s, cid, req.run)
            if row is None:
                row = t.RunRow(
                    campaign_id=cid, run=req.run, assignment_id=0, purpose=req.purpose,
                    status=RunStatus.QUEUED.stored, updated_at=time.time(),
                )
            else:
                convert.run_state(row).check(outcome.status, req.run)
                self._drop_sample(s, row)
            row.assignment_id = self._assignment_id(s, cid, req.assignment)
            convert.fill_run_row(row, outcome)
            row.updated_at = time.time()
            s.add(row)
            s.flush()
            if outcome.sample is not None:
                s.add(convert.sample_row(cid, req.run, row.id, outcome.sample))

    def _drop_sample(self, s: Session, row: t.RunRow) -> None:
        """Delete the sample a failed run left, before the run is recorded again."""
        old = s.exec(select(t.SampleRow).where(t.SampleRow.run_id == row.id)).first()
        if old is not None:
            s.delete(old)
            s.flush()

    def runs(self, name: str) -> list[StoredRun]:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            rows = s.exec(
                select(t.RunRow, t.AssignmentRow, t.SampleRow)
                .join(t.AssignmentRow, col(t.AssignmentRow.id) == col(t.RunRow.assignment_id))
                .outerjoin(t.SampleRow, col(t.SampleRow.run_id) == col(t.RunRow.id))
                .where(t.RunRow.campaign_id == cid)
                .order_by(col(t.RunRow.run))
            ).all()
            return [convert.stored_run(r, a, smp) for r, a, smp in rows]

    def interrupt_in_flight(self, name: str) -> list[StoredRun]:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            rows = s.exec(
                select(t.RunRow).where(
                    t.RunRow.campaign_id == cid, t.RunRow.status == RunStatus.QUEUED.stored,
                )
            ).all()
            for row in rows:
                self._set_run(s, row, RunStatus.INTERRUPTED, interrupted_reason())
            hit = {row.run for row in rows}
        return [r for r in self.runs(name) if r.run in hit]

    def reopen_runs(self, name: str, runs: Iterable[int]) -> None:
        wanted = set(runs)
        with self.session_scope() as s:
            cid = self._cid(s, name)
            for row in s.exec(select(t.RunRow).where(t.RunRow.campaign_id == cid)).all():
                if row.run in wanted and convert.run_state(row) is RunStatus.FAILED:
                    self._set_run(s, row, RunStatus.INTERRUPTED, interrupted_reason(row.reason))

    def _set_run(self, s: Session, row: t.RunRow, status: RunStatus, reason: str | None) -> None:
        convert.run_state(row).check(status, row.run)
        convert.set_run_state(row, status, reason)
        row.updated_at = time.time()
        s.add(row)

    # -- iteration records and models ------------------------------------------------
    def record_iteration(self, name: str, record: IterationRecord) -> None:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            row = s.exec(
                select(t.IterationRow).where(
                    t.IterationRow.campaign_id == cid, t.IterationRow.run == record.run
                )
            ).first() or t.IterationRow(campaign_id=cid, run=record.run, acquisition_s=0.0)
            convert.fill_iteration_row(row, record)
            s.add(row)

    def iterations(self, name: str) -> list[IterationRecord]:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            rows = s.exec(
                select(t.IterationRow)
                .where(t.IterationRow.campaign_id == cid)
                .order_by(col(t.IterationRow.run))
            ).all()
            return [convert.iteration(r.record) for r in rows]

    def save_model(self, name: str, run: int, model: Mapping[str, Any]) -> int:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            rows = s.exec(select(t.ModelRow).where(t.ModelRow.campaign_id == cid)).all()
            for row in rows:
                if row.run == run:
                    row.model = convert.jsonable(model)
                    s.add(row)
                    return row.version
            version = max((r.version for r in rows), default=0) + 1
            s.add(t.ModelRow(
                campaign_id=cid, version=version, run=run, model=convert.jsonable(model),
                created_at=time.time(),
            ))
            return version

    def models(self, name: str) -> list[ModelVersion]:
        with self.session_scope() as s:
            cid = self._cid(s, name)
            rows = s.exec(
                select(t.ModelRow).where(t.ModelRow.campaign_id == cid)
                .order_by(col(t.ModelRow.version))
            ).all()
            return [convert.model_version(r) for r in rows]


def _engine(sa_url: str, *, wal: bool, uri: str | None = None) -> Engine:
    """The engine of ``sa_url``; SQLite: its pragmas (``wal``: switch to write-ahead
    logging) and, with ``uri``, connections opened by that SQLite URI instead."""
    if not sa_url.startswith("sqlite"):
        engine = create_engine(sa_url, connect_args={"connect_timeout": 10},
                               pool_pre_ping=True)
        quiet_interrupted_cleanup(engine)
        return engine
    args: dict[str, Any] = {"timeout": 60, "check_same_thread": False}
    if uri is None:
        engine = create_engine(sa_url, connect_args=args, pool_pre_ping=True)
    else:
        engine = create_engine(sa_url, pool_pre_ping=True,
                               creator=lambda: sqlite3.connect(uri, uri=True, **args))
    event.listen(engine, "connect", functools.partial(_sqlite_pragmas, wal=wal))
    quiet_interrupted_cleanup(engine)
    return engine


def _sqlite_pragmas(dbapi_conn: Any, _record: Any, *, wal: bool) -> None:
    """Foreign keys on; with ``wal``, write-ahead logging (kept in the file), so that the
    readers and the one writer of several processes (CLI campaigns, services, heartbeats)
    never block each other: in the default rollback journal, a commit waits for every
    reader. Readers leave the mode as it is (switching is a write)."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    for attempt in range(_WAL_TRIES if wal else 0):
        try:  # the switch of a new file fails, not waits, while another process switches it
            cur.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or attempt == _WAL_TRIES - 1:
                raise
            time.sleep(0.05)
    cur.close()
