"""Measured resource profiles as model inputs (issue 12, item 5).

A live sample stores what its assignment actually delivered (``Sample.profile``: the CPU
speed, bandwidth and RTT measured on it, ``workbench/profiles.py``; the dataset's profile,
``workbench/workload.py``). ``nimo campaign samples NAME --profile`` adds them to the CSV as
``profile_<key>`` columns, so a model fitted on them (``nimo model fit runs.csv
--attributes profile_cpu_speed,profile_bandwidth_mbit,...``) predicts another workbench's
runs from their measured profiles (``nimo model score MODEL.json their-runs.csv``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

PREFIX = "profile_"


def profile_keys(runs: Sequence[Any]) -> list[str]:
    """Every numeric profile key any run's sample has, sorted."""
    keys = {k for r in runs for k, v in r.sample.profile.items()
            if isinstance(v, int | float) and not isinstance(v, bool)}
    return sorted(keys)


def add_profile_columns(header: list[str], rows: list[list[Any]], runs: Sequence[Any],
                        ) -> tuple[list[str], list[list[Any]]]:
    """``header``/``rows`` (one row per run, in order) with a ``profile_<key>`` column per
    profile key; empty (None) where a run did not measure it."""
    keys = profile_keys(runs)
    out = [[*row, *(_number(r.sample.profile.get(k)) for k in keys)]
           for row, r in zip(rows, runs, strict=True)]
    return [*header, *(PREFIX + k for k in keys)], out


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
