"""Store URLs: the default, the driver PostgreSQL URLs go through, and masking passwords."""

from __future__ import annotations

import os

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

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
