"""The Python API with files: everything of ``nimo.api`` plus replay, design presets and the
shipped datasets (``nimo`` itself never imports ``workbench``).

    from workbench import api
    result = api.replay("memory_cliff", seed=1)            # a shipped dataset or a CSV path
    result.to_dict()["final"]["external_mape_pct"]
    result.model.predict({"cpu_mhz": 930, "mem_mb": 256, "latency_ms": 7.2,
                          "bandwidth_mbit": 60})
    api.replay("memory_cliff", store="sqlite:///nimo.db", name="c1")   # stored, resumable
    api.to_dataframe(api.sample_records("c1", "sqlite:///nimo.db"))

``design`` is a preset name, a design file or a mapping; see ``nimo.api`` for ask/tell with
your own runner, store records, DataFrames and models.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nimo.api import *  # noqa: F403 - this module re-exports the core API
from nimo.api import __all__ as _core_all
from nimo.campaign import CampaignResult
from nimo.planner import DesignSpec, parse_design
from workbench.designs import load_design, preset_names
from workbench.shipped import dataset_names, dataset_path, resolve_data


def design(ref: str | Mapping[str, Any] | DesignSpec | None = None) -> DesignSpec:
    """A design: a preset name or file (None: recommended), a mapping, or a spec."""
    if isinstance(ref, DesignSpec):
        return ref
    if isinstance(ref, Mapping):
        return parse_design(ref, where="design: ")
    return load_design(ref)


def replay(data: str | Path, design_ref: str | Mapping[str, Any] | DesignSpec | None = None,
           seed: int = 0, store: str | None = None, name: str | None = None,
           json_out: str | Path | None = None, progress: bool = False,
           **options: Any) -> CampaignResult:
    """A learning campaign replayed on recorded measurements: ``data`` is a CSV path or a
    shipped dataset's name (``api.dataset_names()``); ``options`` are ``nimo replay``'s
    (``attributes``, ``time_column``, ``where``, ``external_test``). With ``store``/``name``
    the campaign is stored (and resumable) as ``nimo replay --store --name`` does."""
    from workbench.campaigns import launch_replay
    from workbench.replay import ReplayOptions, ReplayRunner

    runner = ReplayRunner.open(ReplayOptions(path=str(resolve_data(str(data))), seed=seed,
                                             **options))
    return launch_replay(runner, design=design(design_ref), seed=seed, store_url=store,
                         name=name, json_out=json_out, progress=progress)


__all__ = [*_core_all, "dataset_names", "dataset_path", "design", "load_design",
           "preset_names", "replay"]
