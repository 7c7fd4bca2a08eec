"""What a scheduler imports to cost plans with NIMO's models (numpy only; networkx is imported
by ``plan_cost`` alone).

A plan is a DAG of tasks (``networkx.DiGraph``). Each node carries one of:

* ``model`` (a ``CostModel`` or a path to its JSON) and ``profile`` (the resource profile
  of the assignment the plan gives the task): a batch task;
* ``staging`` (a ``StagingModel`` or anything with ``predict(size_mb) -> Prediction``) and
  ``size_mb``: a data-staging task that copies a dataset between storage resources;
* ``time_s``: a task of known duration.

``plan_cost(dag)`` is the makespan: the longest path, task times as node weights, tasks
running as soon as their predecessors end (Section 2.1). A model whose prediction for a
task is not a positive time (an unbounded form gone wrong) is refused with a ModelError
naming the task, never ranked. See docs/scheduling.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nimo.errors import ConfigError, ModelError
from nimo.model import CostModel, Prediction
from nimo.model import load_model as _load_model

__all__ = [
    "PlanCost",
    "Prediction",
    "StagingModel",
    "choose_plan",
    "load_model",
    "plan_cost",
    "predict_time",
    "task_time",
]


def load_model(path: str | Path) -> CostModel:
    """A cost model exported by ``nimo model export`` (ModelError if it is not one)."""
    return _load_model(path)


def predict_time(model: CostModel, profile: Mapping[str, float], level: float = 0.90) -> Prediction:
    """Predicted run time of the model's task on a resource profile, with a ``level``
    interval (NaN bounds when the model has no variance estimate)."""
    return model.predict_interval(profile, level)


@dataclass(frozen=True)
class StagingModel:
    """Time to copy ``size_mb`` over a link: ``latency_s + size_mb / bandwidth_mb_s``.

    A measured link profile (e.g. from netperf) is enough; a learned model of a copy tool
    can replace it as long as it has ``predict(size_mb) -> Prediction``.
    """

    bandwidth_mb_s: float
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.bandwidth_mb_s) and self.bandwidth_mb_s > 0
                and math.isfinite(self.latency_s) and self.latency_s >= 0):
            raise ConfigError("staging link needs a finite bandwidth > 0 and latency >= 0 "
                              f"(got {self.bandwidth_mb_s!r} MB/s, {self.latency_s!r} s)")

    def predict(self, size_mb: float) -> Prediction:
        t = self.latency_s + float(size_mb) / self.bandwidth_mb_s
        return Prediction(t, t, t, 0.0)


@dataclass(frozen=True)
class PlanCost:
    """Makespan of a plan, its critical path and each task's predicted time."""

    makespan_s: float
    critical_path: tuple[Any, ...]
    task_s: Mapping[Any, float]


def task_time(node: Any, data: Mapping[str, Any]) -> float:
    """Predicted time of one DAG node (see the module docstring for its attributes)."""
    if "time_s" in data:
        return _duration(node, "time_s", data["time_s"])
    if "staging" in data:
        if "size_mb" not in data:
            raise ConfigError(f"staging task {node!r} lacks size_mb")
        size = _duration(node, "size_mb", data["size_mb"])
        return _duration(node, "staging time", data["staging"].predict(size).mean)
    if "model" in data:
        model = data["model"]
        if isinstance(model, str | Path):
            model = load_model(model)
        if "profile" not in data:
            raise ConfigError(f"task {node!r} has a model but no resource profile")
        p = predict_time(model, data["profile"])
        if not p.is_time:  # never rank a plan on an impossible time
            raise ModelError(f"task {node!r}: the model predicts no positive run time at its "
                             f"profile (T = {p.mean:.4g} s): its form is wrong there",
                             hint="learn it with a bounded design such as recommended")
        return float(p.mean)
    raise ConfigError(f"task {node!r} has no model, staging or time_s")


def _duration(node: Any, key: str, value: Any) -> float:
    """``value`` as a finite number >= 0 (ConfigError naming task ``node`` and ``key``)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise ConfigError(f"task {node!r}: {key} must be a finite number >= 0, not {value!r}")
    return v


def plan_cost(dag: Any) -> PlanCost:
    """Makespan of a plan DAG (``networkx.DiGraph``): the longest path by task time."""
    import networkx as nx

    if not nx.is_directed_acyclic_graph(dag):
        raise ConfigError("a plan must be a directed acyclic graph")
    times = {n: task_time(n, d) for n, d in dag.nodes(data=True)}
    finish: dict[Any, float] = {}
    before: dict[Any, Any] = {}
    for n in nx.topological_sort(dag):
        preds = list(dag.predecessors(n))
        start_after = max(preds, key=lambda p: finish[p]) if preds else None
        before[n] = start_after
        finish[n] = (finish[start_after] if start_after is not None else 0.0) + times[n]
    if not finish:
        return PlanCost(0.0, (), {})
    last = max(finish, key=lambda n: finish[n])
    path = [last]
    while before[path[-1]] is not None:
        path.append(before[path[-1]])
    return PlanCost(finish[last], tuple(reversed(path)), times)


def choose_plan(plans: Mapping[str, Any]) -> tuple[str, dict[str, PlanCost]]:
    """The plan with the least makespan, and every plan's cost."""
    if not plans:
        raise ConfigError("no candidate plans")
    costs = {name: plan_cost(dag) for name, dag in plans.items()}
    return min(costs, key=lambda n: costs[n].makespan_s), costs
