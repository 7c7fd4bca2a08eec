"""Root exceptions of the learning core.

Every user-facing error carries a one-line ``message`` and an optional ``hint`` naming what
would be valid; the CLI prints ``str(error)`` and exits 2, never a traceback.
"""

from __future__ import annotations


class NimoError(Exception):
    """Root of all errors raised by ``nimo``."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(NimoError):
    """A design, inventory or option is malformed or names something unknown."""


class DataError(NimoError):
    """A dataset (CSV of measurements) is malformed or cannot answer the request."""


class ModelError(NimoError):
    """A cost-model file is corrupt, of a newer version, or not a NIMO model."""


class StoreError(NimoError):
    """The campaign store cannot be reached or does not hold what was asked for."""


class RunFailed(NimoError):
    """A run could not produce a sample (the runner says why)."""
