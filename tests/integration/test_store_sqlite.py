"""The store contract against a SQLite file shared by two store objects (two "processes")."""

from __future__ import annotations

import pytest

from nimo.store import open_store
from nimo.store.testing import StoreContract


@pytest.mark.parametrize("check", StoreContract.checks)
def test_sqlite_file_contract(tmp_path, check: str) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    open_store(url).close()  # a first opener creates the tables; the check uses a second one
    store = open_store(url)
    try:
        getattr(StoreContract(), f"check_{check}")(store, f"lite-{check}")
    finally:
        store.close()
