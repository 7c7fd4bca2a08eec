"""Store URLs: the default, the driver PostgreSQL URLs go through, and masking passwords."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from nimo.errors import StoreError

DEFAULT_URL = "sqlite:///./nimo.db"


def default_url() -> str:
    """``$NIMO_STORE_URL`` or the SQLite file ``./nimo.db`` next to the user's work."""
    return os.environ.get("NIMO_STORE_URL") or DEFAULT_URL


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` go through the psycopg 3 driver."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def mask_url(url: str) -> str:
    """The URL with its password replaced by ``***``."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def refuse_missing_file(url: str, shown: str) -> None:
    """``StoreError`` when ``url`` is a SQLite file that does not exist (read-only commands
    must not create an empty store at a mistyped path)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    if not Path(parsed.database).is_file():
        raise StoreError(f"no store at {shown}: {parsed.database} does not exist",
                         hint="check --store or $NIMO_STORE_URL")
