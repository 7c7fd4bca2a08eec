"""Inventory YAML: the workbench's hosts, the knobs to explore, the application and policies.

``load_inventory(path) -> Inventory`` validates everything on load; every error is ONE line
naming the file, the key path (``hosts[1].role``) and what would be valid. The format is
documented in ``docs/inventory.md`` and an example lives in ``inventories/example.yaml``.

Modules: ``model`` (the sections, each key declared once), ``knobs`` (knob kinds, knobs,
assignments), ``hosts`` (hosts and ``hosts_from``), ``values`` (inventory-only value kinds),
``argv`` (placeholders and ``render_argv``), ``load`` (reading a file).
"""

from workbench.inventory.argv import PLACEHOLDERS, render_argv
from workbench.inventory.hosts import load_inventory_hosts
from workbench.inventory.knobs import KNOB_KINDS, Knob, KnobKind
from workbench.inventory.load import load_inventory, parse_inventory
from workbench.inventory.model import (
    ON_FAILURE,
    ROLES,
    STORAGE_METHODS,
    Application,
    Dataset,
    Host,
    Inventory,
    Monitors,
    Policies,
    Storage,
)

__all__ = [
    "KNOB_KINDS", "ON_FAILURE", "PLACEHOLDERS", "ROLES", "STORAGE_METHODS", "Application",
    "Dataset", "Host", "Inventory", "Knob", "KnobKind", "Monitors", "Policies", "Storage",
    "load_inventory", "load_inventory_hosts", "parse_inventory", "render_argv",
]
