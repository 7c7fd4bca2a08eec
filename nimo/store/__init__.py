"""Campaign store: campaigns, runs with their lifecycle, samples, convergence log, model
versions and host leases. SQLite by default (``sqlite:///./nimo.db``), PostgreSQL by URL.

Callers get frozen dataclasses (``nimo.store.types``), never rows.
"""

from nimo.store.sql import DEFAULT_URL, SqlStore, default_url, mask_url, normalise_url
from nimo.store.types import CampaignInfo, Lease, ModelVersion, StoredRun


def open_store(url: str | None = None) -> SqlStore:
    """Open (and create the tables of) the store at ``url`` (default: ``default_url()``)."""
    return SqlStore(url)


__all__ = [
    "DEFAULT_URL",
    "CampaignInfo",
    "Lease",
    "ModelVersion",
    "SqlStore",
    "StoredRun",
    "default_url",
    "mask_url",
    "normalise_url",
    "open_store",
]
