"""Workload knobs in live campaigns (issue 12, item 1).

A ``dataset_mb`` knob makes the input's size an attribute, a ``dataset_files`` knob its
element (file) count (so the element size is size / count): each combination of their
levels has its own dataset ``<export>/<application.dataset.path>-<mb>mb[-<n>f]`` on the
storage host, generated there once (``application.dataset.generate`` with ``{size_mb}`` =
the size level and ``{<knob name>}`` = each level) and reused by every later run, or,
without ``generate``, chosen from datasets already there under those names. Its profile
(total bytes, element count, average and largest element), extracted on the storage host
once per dataset, is stored in each sample's ``profile`` under ``dataset_*`` keys.
``app_param`` knobs need nothing here: their value reaches G's argv as the ``{knob name}``
placeholder.
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
DATASET_KINDS = (DATASET_KIND, "dataset_files")  # knob kinds that pick the run's dataset
PROFILE_PREFIX = "dataset_"
PROFILE_KEYS = ("bytes", "elements", "avg_element_bytes", "max_element_bytes")


def dataset_knobs(inventory: Inventory) -> tuple[Knob, ...]:
    """The inventory's ``dataset_mb``/``dataset_files`` knobs."""
    return tuple(k for k in inventory.knobs if k.kind in DATASET_KINDS)


def dataset_knob(inventory: Inventory) -> Knob | None:
    """The inventory's ``dataset_mb`` knob, if it has one."""
    return next((k for k in inventory.knobs if k.kind == DATASET_KIND), None)


def _levels(kinds: Mapping[str, float]) -> tuple[float, ...]:
    return tuple(float(kinds[k]) for k in DATASET_KINDS if k in kinds)


def level_path(inventory: Inventory, level: float, files: float | None = None) -> str:
    """The dataset of one size (and file-count) level, relative to ``storage.export``."""
    base = inventory.application.dataset.path
    size = f"-{level:g}mb" if level == level else ""  # NaN: no dataset_mb knob
    return f"{base}{size}" + (f"-{files:g}f" if files is not None else "")


def dataset_relpath(inventory: Inventory, kinds: Mapping[str, float]) -> str:
    """The run's dataset relative to the export: its levels', or the fixed one."""
    if not _levels(kinds):
        return inventory.application.dataset.path
    return level_path(inventory, kinds.get(DATASET_KIND, float("nan")),
                      kinds.get("dataset_files"))


def parse_profile(stdout: str, where: str) -> dict[str, float]:
    """The ``dataset_*`` sample-profile entries from the profiler's JSON line."""
    try:
        doc = json.loads(stdout.strip().splitlines()[-1])
        return {PROFILE_PREFIX + k: float(doc[k]) for k in PROFILE_KEYS}
    except (ValueError, KeyError, IndexError, TypeError):
        raise WorkbenchError(f"{where}: unreadable dataset profile {stdout[-200:]!r}") from None


class WorkloadData:
    """Per storage host and level: the dataset made once, and its profile (thread-safe)."""

    def __init__(self, inventory: Inventory, app_dirs: Mapping[str, str]) -> None:
        self.inventory = inventory
        self.app_dirs = app_dirs  # host -> its private app dir (filled as hosts are prepared)
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, tuple[float, ...]], threading.Lock] = {}
        self._profiles: dict[tuple[str, tuple[float, ...]], dict[str, float]] = {}

    @property
    def active(self) -> bool:
        return bool(dataset_knobs(self.inventory))

    def prepare(self, host: str, conn: Connection, kinds: Mapping[str, float],
                values: Mapping[str, object]) -> dict[str, float]:
        """Make sure the run's dataset exists on ``host`` and return its profile (empty
        without a dataset knob). ``values`` are the argv placeholders."""
        levels = _levels(kinds)
        if not levels:
            return {}
        key = (host, levels)
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # concurrent runs of one level wait for the first to make it
            if key not in self._profiles:
                self._profiles[key] = self._make(host, conn, kinds, values)
            return dict(self._profiles[key])

    def _make(self, host: str, conn: Connection, kinds: Mapping[str, float],
              values: Mapping[str, object]) -> dict[str, float]:
        app, st = self.inventory.application, self.inventory.storage
        path = f"{st.export}/{dataset_relpath(self.inventory, kinds)}"
        levels = {k.name: kinds[k.kind] for k in dataset_knobs(self.inventory)}
        if app.dataset.generate:
            conn.run(["mkdir", "-p", st.export], timeout=30)
            size = kinds.get(DATASET_KIND, app.dataset.size_mb or values.get("size_mb", 0))
            argv = render_argv(app.dataset.generate,
                               {**values, "dataset": path, "size_mb": size, **levels})
            conn.run(argv, timeout=max(600.0, app.timeout_s))
        elif not conn.run(["test", "-d", path], check=False, timeout=10).ok:
            which = ", ".join(f"{n}={v:g}" for n, v in levels.items())
            raise WorkbenchError(f"{host}: dataset {path} for {which} is missing "
                                 "and application.dataset.generate is not set")
        out = conn.run(["python3", f"{self.app_dirs[host]}/{PROFILER}", path], timeout=120)
        return parse_profile(out.stdout, f"{host}:{path}")
