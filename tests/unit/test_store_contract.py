"""The store contract on the in-memory store and a SQLite file (the PostgreSQL run is in
tests/integration)."""

from __future__ import annotations

import pytest

from nimo.errors import StoreError
from nimo.store import MemoryStore, normalise_url, open_store
from nimo.store.testing import StoreContract


@pytest.mark.parametrize("check", StoreContract.checks)
def test_memory_contract(check: str) -> None:
    store = MemoryStore()
    try:
        getattr(StoreContract(), f"check_{check}")(store, f"m-{check}")
    finally:
        store.close()


@pytest.mark.parametrize("check", StoreContract.checks)
def test_sqlite_contract(tmp_path, check: str) -> None:
    store = open_store(f"sqlite:///{tmp_path}/nimo.db")
    try:
        getattr(StoreContract(), f"check_{check}")(store, f"c-{check}")
    finally:
        store.close()


def test_unreachable_url_is_one_line_with_password_masked() -> None:
    with pytest.raises(StoreError) as e:
        open_store("postgresql://nimo:s3cret@127.0.0.1:1/nimo")
    text = str(e.value)
    assert "\n" not in text and "s3cret" not in text
    assert text.startswith("cannot open store postgresql://nimo:***@127.0.0.1:1/nimo")


def test_sqlite_in_missing_directory(tmp_path) -> None:
    with pytest.raises(StoreError, match=f"directory {tmp_path}/no/such/dir does not exist"):
        open_store(f"sqlite:///{tmp_path}/no/such/dir/nimo.db")


def test_an_unsupported_scheme_lists_the_valid_ones() -> None:
    with pytest.raises(StoreError, match="unsupported store URL foo://bar: scheme 'foo'") as e:
        open_store("foo://bar")
    assert "sqlite:///FILE or postgresql://" in str(e.value.hint or e.value)


def test_postgres_urls_use_psycopg3() -> None:
    assert normalise_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("sqlite:///x.db") == "sqlite:///x.db"


def test_data_survives_reopen(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/nimo.db"
    with open_store(url) as store:
        store.create_campaign("kept", "replay", design={"a": 1}, seed=3)
    with open_store(url) as store:
        assert store.campaign("kept").seed == 3
