"""Workload knobs in live campaigns (issue 12, item 1).

A ``dataset_mb`` knob makes the input's size an attribute: each level has its own dataset
``<export>/<application.dataset.path>-<level>mb`` on the storage host, generated there once
per level (``application.dataset.generate`` with ``{size_mb}`` = the level) and reused by
every later run, or, without ``generate``, chosen from datasets already there under those
names. Its profile (total bytes, element count, average and largest element), extracted on
the storage host once per level, is stored in each sample's ``profile`` under
``dataset_*`` keys. ``app_param`` knobs need nothing here: their value reaches G's argv as
the ``{knob name}`` placeholder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping

from workbench.apps import PROFILER
from workbench.errors import WorkbenchError
from workbench.inventory import Inventory, Knob, render_argv
from workbench.remote import Connection

DATASET_KIND = "dataset_mb"
PROFILE_PREFIX = "dataset_"
PROFILE_KEYS = ("bytes", "elements", "avg_element_bytes", "max_element_bytes")


def dataset_knob(inventory: Inventory) -> Knob | None:
    """The inventory's ``dataset_mb`` knob, if it has one."""
    return next((k for k in inventory.knobs if k.kind == DATASET_KIND), None)


def level_path(inventory: Inventory, level: float) -> str:
    """The dataset of one size level, relative to ``storage.export``."""
    return f"{inventory.application.dataset.path}-{level:g}mb"


def dataset_relpath(inventory: Inventory, kinds: Mapping[str, float]) -> str:
    """The run's dataset relative to the export: its level's, or the fixed one."""
    if DATASET_KIND in kinds:
        return level_path(inventory, kinds[DATASET_KIND])
    return inventory.application.dataset.path


def parse_profile(stdout: str, where: str) -> dict[str, float]:
    """The ``dataset_*`` sample-profile entries from the profiler's JSON line."""
    try:
        doc = json.loads(stdout.strip().splitlines()[-1])
        return {PROFILE_PREFIX + k: float(doc[k]) for k in PROFILE_KEYS}
    except (ValueError, KeyError, IndexError, TypeError):
        raise WorkbenchError(f"{where}: unreadable dataset profile {stdout[-200:]!r}") from None


class WorkloadData:
    """Per storage host and level: the dataset made once, and its profile (thread-safe)."""

    def __init__(self, inventory: Inventory, app_dir: str) -> None:
        self.inventory = inventory
        self.app_dir = app_dir
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, float], threading.Lock] = {}
        self._profiles: dict[tuple[str, float], dict[str, float]] = {}

    @property
    def active(self) -> bool:
        return dataset_knob(self.inventory) is not None

    def prepare(self, host: str, conn: Connection, kinds: Mapping[str, float],
                values: Mapping[str, object]) -> dict[str, float]:
        """Make sure the run's dataset level exists on ``host`` and return its profile
        (empty without a ``dataset_mb`` knob). ``values`` are the argv placeholders."""
        if DATASET_KIND not in kinds:
            return {}
        key = (host, float(kinds[DATASET_KIND]))
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # concurrent runs of one level wait for the first to make it
            if key not in self._profiles:
                self._profiles[key] = self._make(host, conn, key[1], values)
            return dict(self._profiles[key])

    def _make(self, host: str, conn: Connection, level: float,
              values: Mapping[str, object]) -> dict[str, float]:
        app, st = self.inventory.application, self.inventory.storage
        path = f"{st.export}/{level_path(self.inventory, level)}"
        knob = dataset_knob(self.inventory)
        assert knob is not None
        if app.dataset.generate:
            conn.run(["mkdir", "-p", st.export], timeout=30)
            argv = render_argv(app.dataset.generate, {**values, "dataset": path,
                                                      "size_mb": level, knob.name: level})
            conn.run(argv, timeout=max(600.0, app.timeout_s))
        elif not conn.run(["test", "-d", path], check=False, timeout=10).ok:
            raise WorkbenchError(f"{host}: dataset {path} for {knob.name}={level:g} is missing "
                                 "and application.dataset.generate is not set")
        out = conn.run(["python3", f"{self.app_dir}/{PROFILER}", path], timeout=120)
        return parse_profile(out.stdout, f"{host}:{path}")
