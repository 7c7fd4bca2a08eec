"""Objects a campaign's runs made on hosts (directories, mounts, qdiscs, rules, cgroups),
recorded as they are made and forgotten once removed: the store's copy of the host markers
(``workbench.emulation.hostobjects``). Additive: one table, three ``Store`` methods,
implemented here for the SQL and the in-memory store."""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import delete
from sqlmodel import Field, SQLModel, col, select

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlmodel import Session


@dataclass(frozen=True)
class HostObject:
    """One object a run made on a host: ``kind`` and ``ident`` as in the host's marker."""

    campaign: str
    run_id: str
    host: str
    kind: str
    ident: str
    created_at: float = 0.0


class HostObjectRow(SQLModel, table=True):
    """A recorded host object (deleted when the object is removed)."""

    __tablename__ = "nimo_host_objects"

    id: int | None = Field(default=None, primary_key=True)
    campaign: str = Field(index=True)
    run_id: str
    host: str
    kind: str
    ident: str
    created_at: float


def _stamp(obj: HostObject) -> HostObject:
    return obj if obj.created_at else dataclasses.replace(obj, created_at=time.time())


def _matches(o: HostObject, campaign: str, host: str | None, run_id: str | None) -> bool:
    return (o.campaign == campaign and (host is None or o.host == host)
            and (run_id is None or o.run_id == run_id))


class MemoryHostObjects:
    """The host-object methods of ``MemoryStore``."""

    _objects_lock = threading.Lock()  # guards every MemoryStore's list (they are small)

    def _objects(self) -> list[HostObject]:
        found: list[HostObject] = self.__dict__.setdefault("_host_objects", [])
        return found

    def record_host_object(self, obj: HostObject) -> None:
        """Record an object as it is made."""
        with self._objects_lock:
            self._objects().append(_stamp(obj))

    def host_objects(self, campaign: str, host: str | None = None) -> list[HostObject]:
        """The campaign's recorded objects (on ``host``), oldest first."""
        with self._objects_lock:
            return [o for o in self._objects() if _matches(o, campaign, host, None)]

    def forget_host_objects(self, campaign: str, host: str | None = None,
                            run_id: str | None = None) -> int:
        """Forget removed objects (of one host, of one run); returns how many."""
        with self._objects_lock:
            objs = self._objects()
            keep = [o for o in objs if not _matches(o, campaign, host, run_id)]
            gone = len(objs) - len(keep)
            objs[:] = keep
            return gone


class SqlHostObjects:
    """The host-object methods of ``SqlStore`` (needs its ``session_scope``)."""

    absent_tables: frozenset[str]
    if TYPE_CHECKING:
        def session_scope(self) -> AbstractContextManager[Session]: ...

    def record_host_object(self, obj: HostObject) -> None:
        """Record an object as it is made."""
        o = _stamp(obj)
        with self.session_scope() as s:
            s.add(HostObjectRow(campaign=o.campaign, run_id=o.run_id, host=o.host, kind=o.kind,
                                ident=o.ident, created_at=o.created_at))

    def host_objects(self, campaign: str, host: str | None = None) -> list[HostObject]:
        """The campaign's recorded objects (on ``host``), oldest first."""
        if HostObjectRow.__tablename__ in self.absent_tables:  # an older store, read as is
            return []
        with self.session_scope() as s:
            q = select(HostObjectRow).where(HostObjectRow.campaign == campaign)
            if host is not None:
                q = q.where(HostObjectRow.host == host)
            rows = s.exec(q.order_by(col(HostObjectRow.id))).all()
            return [HostObject(r.campaign, r.run_id, r.host, r.kind, r.ident, r.created_at)
                    for r in rows]

    def forget_host_objects(self, campaign: str, host: str | None = None,
                            run_id: str | None = None) -> int:
        """Forget removed objects (of one host, of one run); returns how many."""
        with self.session_scope() as s:
            q = delete(HostObjectRow).where(col(HostObjectRow.campaign) == campaign)
            if host is not None:
                q = q.where(col(HostObjectRow.host) == host)
            if run_id is not None:
                q = q.where(col(HostObjectRow.run_id) == run_id)
            return int(s.execute(q).rowcount)  # type: ignore[attr-defined]
