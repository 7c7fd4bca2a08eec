"""Owners, campaign claims and host leases of ``SqlStore`` (a mixin; ``nimo.store.sql``).

Every acquisition is one transaction whose first statement writes (SQLite takes its write
lock there; PostgreSQL serialises on the primary keys of ``nimo_campaign_claims`` and
``nimo_host_leases``): two processes never both win. Times come from the store's clock
(PostgreSQL's ``clock_timestamp()``), so owners on machines with skewed clocks still agree on
whose heartbeat is stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, cast

from sqlalchemy import CursorResult, text, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from nimo.errors import StoreError
from nimo.store import convert
from nimo.store import tables as t
from nimo.store.types import Lease, Owner


def _owner(row: t.OwnerRow) -> Owner:
    return Owner(row.id, row.host, row.pid, row.since, row.heartbeat_at)


class SqlOwnership:
    """The owner, claim and lease methods of the ``Store`` contract in SQL."""

    engine: Any
    session_scope: Callable[[], AbstractContextManager[Session]]
    absent_tables: frozenset[str]

    def _now(self, s: Session) -> float:
        if self.engine.dialect.name == "postgresql":
            return float(s.execute(text("SELECT extract(epoch FROM clock_timestamp())"))
                         .scalar_one())
        return time.time()

    # -- owners ----------------------------------------------------------------------
    def register_owner(self, owner: Owner) -> Owner:
        with self.session_scope() as s:
            now = self._now(s)
            s.execute(delete(t.OwnerRow).where(col(t.OwnerRow.id) == owner.id))
            row = t.OwnerRow(id=owner.id, host=owner.host, pid=owner.pid,
                             since=owner.since or now, heartbeat_at=now)
            s.add(row)
            s.flush()
            return _owner(row)

    def heartbeat(self, owner_id: str) -> bool:
        with self.session_scope() as s:
            now = self._now(s)
            done = s.execute(update(t.OwnerRow).where(col(t.OwnerRow.id) == owner_id)
                             .values(heartbeat_at=now))
            return bool(cast(CursorResult[Any], done).rowcount)

    def drop_owner(self, owner_id: str) -> None:
        with self.session_scope() as s:
            self._drop(s, [owner_id], self._now(s))

    def _drop(self, s: Session, dead: Iterable[str], now: float) -> None:
        """Delete owners ``dead`` with their claims and leases (lease log closed at ``now``)."""
        dead = sorted(set(dead))
        if not dead:
            return
        s.execute(delete(t.ClaimRow).where(col(t.ClaimRow.owner).in_(dead)))
        leases = s.exec(select(t.LeaseRow).where(col(t.LeaseRow.owner).in_(dead))).all()
        self._close_log(s, [(r.host, r.campaign) for r in leases], now)
        s.execute(delete(t.LeaseRow).where(col(t.LeaseRow.owner).in_(dead)))
        s.execute(delete(t.OwnerRow).where(col(t.OwnerRow.id).in_(dead)))

    def _reap(self, s: Session, stale_s: float) -> float:
        """Drop owners whose heartbeat is older than ``stale_s`` and the leases of
        unregistered owners; returns the store's time now. Starts with a write."""
        # a write first: SQLite takes its write lock before anything is read
        s.execute(update(t.OwnerRow).where(col(t.OwnerRow.id) == "").values(pid=0))
        now = self._now(s)
        dead = set(s.exec(select(t.OwnerRow.id)
                          .where(col(t.OwnerRow.heartbeat_at) < now - stale_s)).all())
        live = set(s.exec(select(t.OwnerRow.id)).all()) - dead
        dead |= {o for o in s.exec(select(t.LeaseRow.owner)).all() if o not in live}
        dead |= {o for o in s.exec(select(t.ClaimRow.owner)).all() if o not in live}
        self._drop(s, dead, now)
        return now

    # -- campaign claims -------------------------------------------------------------
    def claim_campaign(self, name: str, owner_id: str, stale_s: float) -> Owner | None:
        try:
            with self.session_scope() as s:
                now = self._reap(s, stale_s)
                row = s.get(t.ClaimRow, name)
                if row is None:
                    s.add(t.ClaimRow(campaign=name, owner=owner_id, since=now))
                    s.flush()
                    return None
                if row.owner == owner_id:
                    return None
                holder = s.get(t.OwnerRow, row.owner)
                return _owner(holder) if holder is not None else Owner(row.owner, "?", 0)
        except StoreError as e:
            if isinstance(e.__cause__, IntegrityError):  # another process won the race
                return self.campaign_owner(name) or Owner("?", "?", 0)
            raise

    def release_campaign(self, name: str, owner_id: str) -> None:
        with self.session_scope() as s:
            s.execute(delete(t.ClaimRow).where(col(t.ClaimRow.campaign) == name,
                                               col(t.ClaimRow.owner) == owner_id))

    def campaign_owner(self, name: str) -> Owner | None:
        if t.ClaimRow.__tablename__ in self.absent_tables:  # an older store, read as is
            return None
        with self.session_scope() as s:
            row = s.get(t.ClaimRow, name)
            holder = s.get(t.OwnerRow, row.owner) if row is not None else None
            return _owner(holder) if holder is not None else None

    # -- host leases -----------------------------------------------------------------
    def acquire_hosts(self, campaign: str, hosts: Iterable[str], owner: str,
                      stale_s: float | None = None) -> bool:
        wanted = sorted(set(hosts))
        try:
            with self.session_scope() as s:
                if stale_s is not None:
                    self._reap(s, stale_s)
                mine = set(s.exec(select(t.LeaseRow.host).where(
                    t.LeaseRow.campaign == campaign, t.LeaseRow.owner == owner)).all())
                rows = [t.LeaseRow(host=h, campaign=campaign, owner=owner, acquired_at=0.0)
                        for h in wanted if h not in mine]
                s.add_all(rows)
                s.flush()  # holds the write lock from here: timestamps are ordered
                now = self._now(s)
                for row in rows:
                    row.acquired_at = now
                    s.add(t.LeaseLogRow(host=row.host, campaign=campaign, owner=owner,
                                        acquired_at=now))
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
            self._close_log(s, [(h, campaign) for h in hosts], self._now(s))
            return hosts

    def _close_log(self, s: Session, held: list[tuple[str, str]], now: float) -> None:
        for host, campaign in held:
            for log in s.exec(select(t.LeaseLogRow).where(
                    t.LeaseLogRow.host == host, t.LeaseLogRow.campaign == campaign,
                    col(t.LeaseLogRow.released_at).is_(None))).all():
                log.released_at = now
                s.add(log)

    def leases(self) -> list[Lease]:
        with self.session_scope() as s:
            rows = s.exec(select(t.LeaseRow).order_by(col(t.LeaseRow.host))).all()
            return [convert.lease(r) for r in rows]

    def lease_log(self) -> list[Lease]:
        with self.session_scope() as s:
            rows = s.exec(select(t.LeaseLogRow).order_by(col(t.LeaseLogRow.id))).all()
            return [convert.lease(r) for r in rows]
