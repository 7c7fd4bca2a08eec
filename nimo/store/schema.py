"""The store's schema version and its forward migrations.

A store records its schema version in ``nimo_schema`` (one row). Opening a store:

* empty database: the tables are created and the current version recorded;
* an older store (version 1 is a store from before versions were recorded: it has
  ``nimo_campaigns`` but no ``nimo_schema``): the migrations from its version up to
  ``SCHEMA_VERSION`` run, in one transaction, and the new version is recorded;
* a newer store (written by a later nimo): refused with one line, nothing changed;
* a current store is only read (a reader may lack write permission); so is an older one
  opened by a reader who may not write it (``read_only``): the tables a later version added
  are then absent, and the store reads them as empty.

Creating and upgrading hold the store's write lock from the first look (``_schema_lock``),
so that processes opening a new store at the same moment create it once.

A schema change adds ``MIGRATIONS[v]`` (upgrades version v to v + 1, as SQL on the
connection) and bumps ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager

from sqlalchemy import Column, Float, Integer, MetaData, Table, inspect, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from nimo.errors import StoreError

SCHEMA_VERSION = 3
SCHEMA_TABLE = "nimo_schema"
LEGACY_MARKER = "nimo_campaigns"  # present in every store, versioned or not
_LOCK_KEY = 0x4E494D4F  # "NIMO": the PostgreSQL advisory lock creating or upgrading a store

_meta = MetaData()
schema_table = Table(
    SCHEMA_TABLE, _meta,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
)


def _v1_to_v2(conn: Connection) -> None:
    """Version 2 records the schema version (the table is created by ``ensure_schema``);
    the tables and columns of version 1 are unchanged."""


def _v2_to_v3(conn: Connection) -> None:
    """Version 3 adds ``nimo_owners`` and ``nimo_campaign_claims`` (created by
    ``ensure_schema``): one owner per campaign, alive by its heartbeat. A version-2 nimo
    would ignore them, so it is refused by the version bump."""


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3}


def stored_version(conn: Connection, names: Collection[str] | None = None) -> int | None:
    """The store's schema version; 1 for a store from before versions; None when empty
    (``names``: its table names, when already asked)."""
    names = set(inspect(conn).get_table_names()) if names is None else set(names)
    if SCHEMA_TABLE in names:
        row = conn.execute(select(schema_table.c.version).where(schema_table.c.id == 1)).first()
        if row is not None:
            return int(row[0])
    return 1 if LEGACY_MARKER in names else None


def ensure_schema(engine: Engine, create_tables: Callable[[Connection], None], url: str,
                  *, create: bool = True, tables: Collection[str] = (),
                  read_only: bool = False) -> tuple[int, frozenset[str]]:
    """Create, upgrade or refuse the store's schema (see the module); returns the version
    the store had when opened (None read as the current one) and which of ``tables`` it
    still lacks (only a store opened ``read_only`` may). A current store holding all
    ``tables`` is only read, and so is any NIMO store when ``read_only``; with ``create``
    False a database without NIMO tables is refused, not filled."""
    with engine.connect() as conn:
        names = set(inspect(conn).get_table_names())
        found = stored_version(conn, names)
        conn.rollback()
    absent = frozenset(tables) - names
    _refuse_newer(found, url)
    if found == SCHEMA_VERSION and not absent:
        return found, absent
    if found is None and not create:
        raise StoreError(f"{url} is not a NIMO store: it has no nimo tables",
                         hint="check --store or $NIMO_STORE_URL")
    if read_only and found is not None:
        return found, absent  # an upgrade writes; its owner's next open does it
    with _schema_lock(engine) as conn:
        found = stored_version(conn)  # again: another process may have created it meanwhile
        _refuse_newer(found, url)
        create_tables(conn)
        _meta.create_all(conn)
        for v in range(found or SCHEMA_VERSION, SCHEMA_VERSION):
            MIGRATIONS[v](conn)
        if found != SCHEMA_VERSION:
            _record(conn, found)
    return found or SCHEMA_VERSION, frozenset()


def _refuse_newer(found: int | None, url: str) -> None:
    if found is not None and found > SCHEMA_VERSION:
        raise StoreError(
            f"store {url} has schema version {found}, newer than this nimo's "
            f"{SCHEMA_VERSION}", hint="upgrade nimo to use this store")


@contextmanager
def _schema_lock(engine: Engine) -> Iterator[Connection]:
    """A transaction that holds the store's write lock from its start, so that processes
    creating or upgrading the same store do it one after the other (each re-reads the
    version inside): SQLite ``BEGIN IMMEDIATE`` (waits up to the busy timeout; pysqlite would
    run the DDL outside any transaction), PostgreSQL a transaction-scoped advisory lock."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif engine.dialect.name == "postgresql":
            conn.execute(text(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})"))
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()


def _record(conn: Connection, found: int | None) -> None:
    now = time.time()
    if found is None or conn.execute(select(schema_table.c.id)).first() is None:
        try:
            with conn.begin_nested():
                conn.execute(schema_table.insert().values(id=1, version=SCHEMA_VERSION,
                                                          updated_at=now))
        except IntegrityError:  # another process created the store at the same moment
            pass
        return
    conn.execute(schema_table.update().where(schema_table.c.id == 1)
                 .values(version=SCHEMA_VERSION, updated_at=now))


def set_version(engine: Engine, version: int) -> None:
    """Record ``version`` (for tests of migration and refusal)."""
    with engine.begin() as conn:
        _meta.create_all(conn)
        conn.execute(schema_table.delete())
        conn.execute(schema_table.insert().values(id=1, version=version, updated_at=time.time()))
