"""The store contract against a real PostgreSQL server.

Start one with ``export NIMO_TEST_POSTGRES_URL=$(scripts/start-postgres.sh)``.
"""

from __future__ import annotations

import os
import uuid

import pytest

from nimo.store import open_store
from nimo.store.testing import StoreContract

URL = os.environ.get("NIMO_TEST_POSTGRES_URL")

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not URL, reason="NIMO_TEST_POSTGRES_URL unset (scripts/start-postgres.sh)"),
]


@pytest.mark.parametrize("check", StoreContract.checks)
def test_postgres_contract(check: str) -> None:
    store = open_store(URL)
    try:
        getattr(StoreContract(), f"check_{check}")(store, f"pg-{uuid.uuid4().hex[:8]}-{check}")
    finally:
        store.close()


def test_postgres_driver_is_psycopg3() -> None:
    store = open_store(URL)
    try:
        assert store.engine.dialect.driver == "psycopg"
    finally:
        store.close()


@pytest.mark.slow
def test_replay_campaign_killed_and_resumed_on_postgres(tmp_path) -> None:
    """The whole path on PostgreSQL: `nimo replay` killed mid-way, `nimo campaign resume`."""
    import signal
    import subprocess
    import sys
    import time

    from nimo.records import RunStatus
    from workbench.synthetic import write_all

    write_all(tmp_path)
    name = f"pg-crash-{uuid.uuid4().hex[:8]}"
    args = ["replay", str(tmp_path / "saturating.csv"), "--external-test", "10",
            "--design", "paper-default", "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "workbench", *args, "--store", URL,
                             "--name", name], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    store = open_store(URL)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "finished before kill"
            try:
                if len(store.samples(name)) >= 5:
                    break
            except Exception:  # not created yet
                pass
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_before = len(store.samples(name))
        resumed = subprocess.run([sys.executable, "-m", "workbench", "campaign", "resume", name,
                                  "--store", URL, "--quiet"], capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
        ref_db = tmp_path / "ref.db"
        subprocess.run([sys.executable, "-m", "workbench", *args, "--store",
                        f"sqlite:///{ref_db}", "--name", "ref"], check=True, capture_output=True)
        with open_store(f"sqlite:///{ref_db}") as ref:
            expected = [(r.run, dict(r.assignment), r.sample.T) for r in ref.runs("ref")]
        runs = store.runs(name)
        assert [(r.run, dict(r.assignment), r.sample.T) for r in runs] == expected
        assert all(r.status is RunStatus.DONE for r in runs)
        assert done_before >= 5 and store.campaign(name).status == "done"
    finally:
        store.close()


def test_postgres_schema_versions() -> None:
    """Schema version recorded, upgraded, a newer one refused: on a database of its own."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from nimo.store import normalise_url
    from nimo.store.testing import check_schema_versions

    db = f"nimo_schema_{uuid.uuid4().hex[:8]}"
    admin = create_engine(normalise_url(URL), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{db}"'))
    try:
        url = make_url(normalise_url(URL)).set(database=db).render_as_string(hide_password=False)
        check_schema_versions(url, open_store)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
        admin.dispose()
