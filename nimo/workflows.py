"""Workflow cost with data volumes on the edges and per-cluster transfers (seed 002; the
NIMO paper's Example 1), beside ``nimo.scheduling.plan_cost``'s dominating path.

A workflow is a DAG (``networkx.DiGraph``) of tasks. Each node carries what
``nimo.scheduling.task_time`` reads (``model`` + ``profile``, ``staging`` + ``size_mb`` or
``time_s``), the ``cluster`` it runs on, and its output volume: ``output_mb`` (a number) or
``output_model`` (anything with ``predict(rows) -> array``, e.g. a family model of the output
volume, evaluated on ``profile``). An edge ``u -> v`` carries u's output volume to v (or its
own ``volume_mb``); between different clusters it costs ``latency_s + volume / bandwidth``
of ``links[(cluster u, cluster v)]`` (a ``StagingModel``; a missing link is an error), and
nothing within one cluster. The makespan is the longest path with task times on the nodes and
transfer times on the edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nimo.errors import ConfigError
from nimo.scheduling import task_time


@dataclass(frozen=True)
class WorkflowCost:
    """Makespan, the dominating path (tasks in order), and per task/edge times and volumes."""

    makespan_s: float
    critical_path: tuple[Any, ...]
    task_s: Mapping[Any, float]
    transfer_s: Mapping[tuple[Any, Any], float]
    volume_mb: Mapping[tuple[Any, Any], float]


def output_mb(node: Any, data: Mapping[str, Any]) -> float:
    """Predicted output volume of a task (0 when it names none)."""
    if "output_mb" in data:
        return float(data["output_mb"])
    if "output_model" in data:
        if "profile" not in data:
            raise ConfigError(f"task {node!r} has an output_model but no profile")
        return float(data["output_model"].predict([dict(data["profile"])])[0])
    return 0.0


def transfer_s(u: Any, v: Any, volume: float, dag: Any, links: Mapping[tuple[str, str], Any]
               ) -> float:
    cu, cv = dag.nodes[u].get("cluster"), dag.nodes[v].get("cluster")
    if cu == cv or volume <= 0:
        return 0.0
    link = links.get((cu, cv)) or links.get((cv, cu))
    if link is None:
        raise ConfigError(f"edge {u!r} -> {v!r}: no link between clusters {cu!r} and {cv!r}",
                          hint="links: " + ", ".join(f"{a}-{b}" for a, b in links))
    return float(link.predict(volume).mean)


def workflow_cost(dag: Any, links: Mapping[tuple[str, str], Any] | None = None
                  ) -> WorkflowCost:
    """Makespan of a workflow with transfers between clusters (see the module docstring)."""
    import networkx as nx

    if not nx.is_directed_acyclic_graph(dag):
        raise ConfigError("a workflow must be a directed acyclic graph")
    links = links or {}
    times = {n: task_time(n, d) for n, d in dag.nodes(data=True)}
    out = {n: output_mb(n, d) for n, d in dag.nodes(data=True)}
    volume = {(u, v): float(d.get("volume_mb", out[u])) for u, v, d in dag.edges(data=True)}
    moves = {e: transfer_s(e[0], e[1], vol, dag, links) for e, vol in volume.items()}
    finish: dict[Any, float] = {}
    before: dict[Any, Any] = {}
    for n in nx.topological_sort(dag):
        arrivals = {p: finish[p] + moves[(p, n)] for p in dag.predecessors(n)}
        before[n] = max(arrivals, key=lambda p: arrivals[p]) if arrivals else None
        finish[n] = (arrivals[before[n]] if arrivals else 0.0) + times[n]
    if not finish:
        return WorkflowCost(0.0, (), {}, {}, {})
    last = max(finish, key=lambda n: finish[n])
    path = [last]
    while before[path[-1]] is not None:
        path.append(before[path[-1]])
    return WorkflowCost(finish[last], tuple(reversed(path)), times, moves, volume)
