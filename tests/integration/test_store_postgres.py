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
