"""Campaign store: campaigns, runs with their lifecycle, samples, convergence log, model
versions and host leases. SQLite by default (``sqlite:///./nimo.db``) or PostgreSQL by URL
(``SqlStore``); ``MemoryStore`` keeps one in memory for tests and dry runs.

Callers get frozen records (``nimo.records``, ``nimo.store.types``), never rows.
"""

from nimo.records import CampaignInfo, StoredRun
from nimo.store.base import Store
from nimo.store.memory import MemoryStore
from nimo.store.sql import SqlStore
from nimo.store.types import Lease, ModelVersion
from nimo.store.urls import DEFAULT_URL, default_url, mask_url, normalise_url


def open_store(url: str | None = None, *, create: bool = True) -> SqlStore:
    """Open (and create or upgrade the tables of) the store at ``url`` (default:
    ``default_url()``); with ``create`` False a missing SQLite file is an error."""
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
