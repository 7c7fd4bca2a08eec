"""Campaign store: campaigns, runs with their lifecycle, samples, convergence log, model
versions and host leases. SQLite by default (``sqlite:///./nimo.db``) or PostgreSQL by URL
(``SqlStore``); ``MemoryStore`` keeps one in memory for tests and dry runs.

Callers get frozen records (``nimo.records``, ``nimo.store.types``), never rows. The names
below load on first use (PEP 562): ``DEFAULT_URL`` alone (a command's help text) imports no
database library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nimo.lazy import lazy_attributes
from nimo.store.default import DEFAULT_URL

if TYPE_CHECKING:
    from nimo.records import CampaignInfo, StoredRun
    from nimo.store.base import Store
    from nimo.store.memory import MemoryStore
    from nimo.store.sql import SqlStore
    from nimo.store.types import Lease, ModelVersion
    from nimo.store.urls import default_url, mask_url, normalise_url

_MODULE_OF = {
    **dict.fromkeys(("CampaignInfo", "StoredRun"), "nimo.records"),
    "Store": "nimo.store.base",
    "MemoryStore": "nimo.store.memory",
    "SqlStore": "nimo.store.sql",
    **dict.fromkeys(("Lease", "ModelVersion"), "nimo.store.types"),
    **dict.fromkeys(("default_url", "mask_url", "normalise_url"), "nimo.store.urls"),
}


__getattr__ = lazy_attributes(__name__, _MODULE_OF)


def open_store(url: str | None = None, *, create: bool = True) -> SqlStore:
    """Open (and create or upgrade the tables of) the store at ``url`` (default:
    ``default_url()``); with ``create`` False a missing SQLite file is an error."""
    from nimo.store.sql import SqlStore

    return SqlStore(url, create=create)


__all__ = [
    "DEFAULT_URL",
    "CampaignInfo",
    "Lease",
    "MemoryStore",
    "ModelVersion",
    "SqlStore",
    "Store",
    "StoredRun",
    "default_url",
    "mask_url",
    "normalise_url",
    "open_store",
]
