"""NIMO learning core: pure planning and modelling, no commands, no SSH.

Data flow: inventory/space -> planner (ask) -> runner (workbench) -> samples (tell)
-> predictors -> cost model (export).

The Python API (``nimo.api``, documented there) is re-exported here and loaded on first use,
so ``import nimo`` stays cheap: ``nimo.learn``, ``nimo.make_planner``, ``nimo.outcome``,
``nimo.load_model``, ``nimo.predict``, ``nimo.open_store``, ``nimo.sample_records``,
``nimo.to_dataframe``, ... Replay and design presets: ``workbench.api``. ``nimo.load_model``,
``nimo.CostModel`` and ``nimo.Prediction`` come from ``nimo.model``, so a scheduler's venv
with numpy alone can use them.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = (
    "Attribute", "CostModel", "DesignSpec", "IterationRecord", "LearnResult", "MissingExtra",
    "Planner", "Prediction", "ResourceSpace", "RunOutcome", "RunRequest", "Sample",
    "campaign_records", "iteration_records", "learn", "load_model", "make_planner", "open_store",
    "outcome", "parse_design", "predict", "sample_records", "to_dataframe",
)


_NUMPY_ONLY = ("CostModel", "Prediction", "load_model")  # from nimo.model, not nimo.api


def __getattr__(name: str) -> Any:
    if name in _NUMPY_ONLY:
        return getattr(importlib.import_module("nimo.model"), name)
    if name in _API:
        return getattr(importlib.import_module("nimo.api"), name)
    raise AttributeError(f"module 'nimo' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
