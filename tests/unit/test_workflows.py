"""Workflow cost with predicted data volumes and per-cluster transfers (issue 12 item 7)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.families import fit_family
from nimo.scheduling import StagingModel, plan_cost
from nimo.workflows import workflow_cost


def example_1(site: str) -> nx.DiGraph:
    """The paper's Example 1 as a workflow: data at A, task G at ``site``, result back at A."""
    g = nx.DiGraph()
    g.add_node("read", time_s=1.0, cluster="A", output_mb=800.0)
    g.add_node("G", time_s={"A": 100.0, "B": 30.0, "C": 60.0}[site], cluster=site,
               output_mb=50.0)
    g.add_node("write", time_s=1.0, cluster="A")
    g.add_edges_from([("read", "G"), ("G", "write")])
    return g


LINKS = {("A", "B"): StagingModel(bandwidth_mb_s=10.0, latency_s=0.5),
         ("A", "C"): StagingModel(bandwidth_mb_s=100.0, latency_s=0.5)}


def test_transfers_between_clusters_change_the_best_site():
    costs = {s: workflow_cost(example_1(s), LINKS).makespan_s for s in "ABC"}
    assert costs["A"] == pytest.approx(102.0)
    assert costs["B"] == pytest.approx(1 + 80.5 + 30 + 5.5 + 1)
    assert costs["C"] == pytest.approx(1 + 8.5 + 60 + 1.0 + 1)
    assert min(costs, key=costs.get) == "C"
    # without transfer terms the dominating path alone would pick B
    assert plan_cost(example_1("B")).makespan_s < plan_cost(example_1("C")).makespan_s


def test_critical_path_follows_the_latest_arrival_and_volumes_come_from_a_model():
    rows = [{"input_mb": float(v)} for v in (10, 20, 40, 80)]
    volume_model = fit_family("product", rows, [0.5 * r["input_mb"] + 1 for r in rows],
                              numeric=["input_mb"], load=["input_mb"])
    g = nx.DiGraph()
    g.add_node("a", time_s=5.0, cluster="A", output_model=volume_model,
               profile={"input_mb": 60.0})
    g.add_node("b", time_s=20.0, cluster="A", output_mb=0.0)
    g.add_node("c", time_s=1.0, cluster="B")
    g.add_edges_from([("a", "c"), ("b", "c")])
    cost = workflow_cost(g, {("A", "B"): StagingModel(bandwidth_mb_s=1.0)})
    assert cost.volume_mb[("a", "c")] == pytest.approx(31.0)
    assert cost.transfer_s[("a", "c")] == pytest.approx(31.0)
    assert cost.critical_path == ("a", "c") and cost.makespan_s == pytest.approx(37.0)
    assert np.isclose(cost.task_s["b"], 20.0)


def test_a_missing_link_is_named():
    with pytest.raises(ConfigError, match="no link between clusters 'A' and 'B'"):
        workflow_cost(example_1("B"), {})
