"""Root exceptions of the workbench (side-effect layer)."""

from __future__ import annotations

from nimo.exceptions import NimoError


class WorkbenchError(NimoError):
    """Root of errors raised by ``workbench``; carries ``message`` and optional ``hint``."""


class InventoryError(WorkbenchError):
    """An inventory YAML file is malformed or names something unknown."""


class HostError(WorkbenchError):
    """A host cannot be reached, refused our key, or presented an unexpected host key."""


class RemoteCommandFailed(WorkbenchError):
    """A remote command exited non-zero (str() shows host, command, exit code, stderr tail)."""


class EmulationError(WorkbenchError):
    """Setting up or verifying tc, cgroups or mounts failed."""
