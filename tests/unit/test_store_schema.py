"""The store's schema version: created, upgraded from a store without one, a newer one
refused (issue 10, item 11). PostgreSQL: tests/integration/test_store_postgres.py."""

from __future__ import annotations

import pytest

from nimo.errors import StoreError
from nimo.store import open_store
from nimo.store.testing import check_schema_versions
from workbench.cli import main


def test_sqlite_schema_versions(tmp_path) -> None:
    check_schema_versions(f"sqlite:///{tmp_path}/nimo.db", open_store)


def test_read_only_commands_never_create_a_store(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path}/typo.db"
    for argv in (["campaign", "list"], ["campaign", "status", "x"], ["campaign", "log", "x"],
                 ["campaign", "samples", "x"], ["campaign", "delete", "x"]):
        assert main([*argv, "--store", url]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"no store at {url}" in err, err
    assert not (tmp_path / "typo.db").exists()
    with pytest.raises(StoreError, match="does not exist"):
        open_store(url, create=False)
