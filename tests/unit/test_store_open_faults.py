"""Opening a store: processes creating a new SQLite store at the same moment all succeed;
a reader (``create=False``) writes nothing, reads a store it may not write, and refuses a
file that is not a NIMO store or does not exist without creating anything."""

from __future__ import annotations

import hashlib
import inspect
import multiprocessing as mp
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from nimo.errors import StoreError
from nimo.store import open_store
from nimo.store.schema import SCHEMA_VERSION
from workbench.cli import main

DESIGN = {"knobs": [{"name": "x", "values": [1, 2]}]}
OPENERS = 4
TRIALS = 5


def _open(url: str, barrier: mp.synchronize.Barrier, results: mp.Queue) -> None:
    barrier.wait()
    try:
        open_store(url).close()
        results.put("ok")
    except StoreError as e:
        results.put(str(e))


def test_processes_creating_one_new_sqlite_store_all_succeed(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    for trial in range(TRIALS):
        url = f"sqlite:///{tmp_path}/new{trial}.db"
        barrier, results = ctx.Barrier(OPENERS), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(url, barrier, results)) for _ in range(OPENERS)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        got = [results.get(timeout=5) for _ in procs]
        assert got == ["ok"] * OPENERS, f"trial {trial}: {got}"
        store = open_store(url)
        assert store.schema_found == SCHEMA_VERSION and store.campaigns() == []
        store.close()


def test_a_new_store_opens_while_another_process_holds_its_write_lock(tmp_path: Path) -> None:
    """A creator holding the write lock of the still empty file (rollback mode until its
    first commit) made switching to write-ahead logging fail at once ("database is
    locked") instead of waiting."""
    db = tmp_path / "new.db"
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        store = open_store(f"sqlite:///{db}")
        assert store.schema_found == SCHEMA_VERSION
        store.close()
    finally:
        release.join()
        holder.close()


def _digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def _store_with_campaign(path: Path) -> str:
    url = f"sqlite:///{path}"
    with open_store(url) as store:
        store.create_campaign("c1", "replay", design=DESIGN, seed=1)
    return url


def test_reader_writes_nothing_to_an_existing_store(tmp_path: Path) -> None:
    url = _store_with_campaign(tmp_path / "s.db")
    before, files = _digest(tmp_path / "s.db"), sorted(os.listdir(tmp_path))
    with open_store(url, create=False) as store:
        assert [c.name for c in store.campaigns()] == ["c1"]
    assert _digest(tmp_path / "s.db") == before and sorted(os.listdir(tmp_path)) == files


def test_reader_refuses_an_empty_file_and_leaves_it_empty(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "e.db"
    empty.touch()
    url = f"sqlite:///{empty}"
    assert main(["campaign", "list", "--store", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a NIMO store" in err and str(empty) in err, err
    assert empty.stat().st_size == 0 and sorted(os.listdir(tmp_path)) == ["e.db"]


def test_reader_refuses_a_database_without_nimo_tables(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    url = f"sqlite:///{other}"
    with sqlite3.connect(other) as conn:  # a SQLite file of something else
        conn.execute("CREATE TABLE theirs (x INTEGER)")
    conn.close()
    before = _digest(other)
    with pytest.raises(StoreError, match="is not a NIMO store"):
        open_store(url, create=False)
    assert _digest(other) == before


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can reach (pytest's tmp_path is private to its user)."""
    d = Path(tempfile.mkdtemp(prefix="nimo-ro-", dir="/tmp"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _read_back(store: object) -> str:
    """What a reader sees: the campaign names, and each one's owner and host objects (the
    tables a version-3 store added) where there are any."""
    names = [c.name for c in store.campaigns()]  # type: ignore[attr-defined]
    extra = [(store.campaign_owner(n), store.host_objects(n))  # type: ignore[attr-defined]
             for n in names]
    return repr(names) + ("" if all(o is None and not h for o, h in extra) else repr(extra))


READ = ("import sys\nfrom nimo.store import open_store\n"
        + inspect.getsource(_read_back)
        + "with open_store(sys.argv[1], create=False) as s:\n"
        "    print(_read_back(s))\n")


def _as_reader(url: str) -> subprocess.CompletedProcess[str]:
    """Read the store as a user who may not write it: as root (who may write anything), a
    forked child that drops to ``nobody`` (the modules are loaded already, so the tree need
    not be reachable by nobody); else this user once the file and its directory are
    read-only."""
    if os.geteuid() != 0:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        return subprocess.run([sys.executable, "-c", READ, url], capture_output=True,
                              text=True, env=env, timeout=120)
    import pwd

    nobody = pwd.getpwnam("nobody")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            with open_store(url, create=False) as store:
                out = _read_back(store)
            code = 0
        except BaseException as e:  # reported to the parent, never raised in the child
            out = f"{type(e).__name__}: {e}"
        os.write(write_end, out.encode())
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        text = fh.read().decode()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return subprocess.CompletedProcess([], code, text if code == 0 else "",
                                       "" if code == 0 else text)


@pytest.mark.parametrize("dir_writable", [False, True])
def test_a_user_who_may_not_write_the_store_reads_it(shared_dir: Path,
                                                    dir_writable: bool) -> None:
    db = shared_dir / "s.db"
    _reads_c1_and_writes_nothing(_store_with_campaign(db), db, dir_writable)


def _reads_c1_and_writes_nothing(url: str, db: Path, dir_writable: bool = True) -> None:
    """A user who may not write ``db`` (in a dir they may write or not) reads its one
    campaign c1, and nothing is written."""
    db.chmod(0o444)
    writable = 0o777 if os.geteuid() == 0 else 0o755  # nobody, or this user (file 0444)
    db.parent.chmod(writable if dir_writable else 0o555)
    before, files = _digest(db), sorted(os.listdir(db.parent))
    try:
        done = _as_reader(url)
    finally:
        db.parent.chmod(0o755)
    assert done.returncode == 0 and done.stdout.strip() == "['c1']", done.stderr
    # nothing written, and no -shm/-wal left that would lock the owner out of its store
    assert _digest(db) == before and sorted(os.listdir(db.parent)) == files


def test_reader_names_a_missing_file_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        open_store(f"sqlite:///{tmp_path}/typo.db", create=False)
    assert os.listdir(tmp_path) == []


def test_a_writer_still_creates_a_table_missing_from_a_current_store(tmp_path: Path) -> None:
    url = _store_with_campaign(tmp_path / "s.db")
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("DROP TABLE nimo_host_objects")
    conn.close()
    store = open_store(url)
    assert store.schema_found == SCHEMA_VERSION and store.campaign("c1").seed == 1
    with store.engine.connect() as c:
        assert c.exec_driver_sql("SELECT count(*) FROM nimo_host_objects").scalar() == 0
    store.close()


def _downgrade_to_version_2(db: Path) -> None:
    """Make ``db`` a store as a version-2 nimo left it: no owner or claim tables."""
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE nimo_campaign_claims")
        conn.execute("DROP TABLE nimo_owners")
        conn.execute("UPDATE nimo_schema SET version = 2")
    conn.close()


def test_a_user_who_may_not_write_an_older_store_reads_it_without_upgrading(
        shared_dir: Path) -> None:
    """An upgrade writes, so a reader who may not write an older store had been refused;
    it now reads it as it is, and the store stays as it was for its owner to upgrade."""
    db = shared_dir / "s.db"
    url = _store_with_campaign(db)
    _downgrade_to_version_2(db)
    _reads_c1_and_writes_nothing(url, db)
    db.chmod(0o644)
    store = open_store(url)  # its owner (a writer) still upgrades it
    assert store.schema_found == 2 and store.campaign_owner("c1") is None
    store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM nimo_schema").fetchone() == (SCHEMA_VERSION,)
    conn.close()
