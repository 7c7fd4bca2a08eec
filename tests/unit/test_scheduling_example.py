"""The paper's Example 1 as a scheduler would do it: learn G's cost model with NIMO, export
it, load it with ``nimo.scheduling`` and pick among P1 (run at A), P2 (run at B, remote I/O
to A) and P3 (stage the data to C, run at C) with the staging task's cost included."""

from __future__ import annotations

import networkx as nx
import pytest

from nimo.campaign import Campaign
from nimo.errors import ConfigError, ModelError
from nimo.planner import make_planner
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from nimo.runner import RunnerBase
from nimo.scheduling import StagingModel, choose_plan, load_model, plan_cost, predict_time
from nimo.space import Attribute, ResourceSpace

SPACE = ResourceSpace((
    Attribute("cpu_mhz", (1000.0, 1500.0, 2000.0, 2500.0, 3000.0), resource="compute"),
    Attribute("latency_ms", (0.0, 2.0, 5.0, 10.0, 20.0), direction=-1, resource="network"),
))
# Sites of Example 1: B computes fastest but reaches G's data at A over the network; C is
# faster than A and has room for the data once it is staged there.
SITES = {"A": {"cpu_mhz": 1000.0, "latency_ms": 0.0},
         "B": {"cpu_mhz": 3000.0, "latency_ms": 20.0},
         "C": {"cpu_mhz": 2000.0, "latency_ms": 0.0}}


class App:
    """A synthetic G: per-MB compute and per-MB network stall (T = D (o_a + o_n + o_d))."""

    def __init__(self, compute: float, stall_per_ms: float, data_mb: float) -> None:
        self.compute, self.stall_per_ms, self.data_mb = compute, stall_per_ms, data_mb

    def occupancies(self, a) -> tuple[float, float, float]:
        o_a = self.compute / a["cpu_mhz"]
        o_n = 0.01 + self.stall_per_ms * a["latency_ms"]
        return o_a, o_n, 0.005

    def T(self, a) -> float:
        return self.data_mb * sum(self.occupancies(a))


CPU_HEAVY = App(compute=4000.0, stall_per_ms=0.002, data_mb=100.0)
IO_HEAVY = App(compute=200.0, stall_per_ms=0.05, data_mb=2000.0)


class AppRunner(RunnerBase):
    def __init__(self, app: App) -> None:
        self.app = app

    @property
    def space(self) -> ResourceSpace:
        return SPACE

    def spec(self) -> dict:
        return {"compute": self.app.compute, "stall_per_ms": self.app.stall_per_ms,
                "data_mb": self.app.data_mb}

    def run(self, request: RunRequest) -> RunOutcome:
        a = dict(request.assignment)
        o_a, o_n, o_d = self.app.occupancies(a)
        T = self.app.T(a)
        sample = Sample(a, T=T, D=self.app.data_mb, U=o_a / (o_a + o_n + o_d),
                        o_a=o_a, o_n=o_n, o_d=o_d)
        return RunOutcome(request, RunStatus.DONE, sample)


def exported_model(app: App, tmp_path, name: str):
    """Learn G's model with a NIMO campaign and export it as a scheduler would receive it."""
    result = Campaign(make_planner(SPACE, None, seed=1), AppRunner(app)).run()
    path = result.model.save(tmp_path / f"{name}.json")
    return load_model(path)


def plans(model, size_mb: float, link: StagingModel) -> dict[str, nx.DiGraph]:
    p1, p2, p3 = nx.DiGraph(), nx.DiGraph(), nx.DiGraph()
    p1.add_node("G@A", model=model, profile=SITES["A"])
    p2.add_node("G@B", model=model, profile=SITES["B"])
    p3.add_node("stage A->C", staging=link, size_mb=size_mb)
    p3.add_node("G@C", model=model, profile=SITES["C"])
    p3.add_edge("stage A->C", "G@C")
    return {"P1": p1, "P2": p2, "P3": p3}


def true_costs(app: App, size_mb: float, link: StagingModel) -> dict[str, float]:
    return {"P1": app.T(SITES["A"]), "P2": app.T(SITES["B"]),
            "P3": link.predict(size_mb).mean + app.T(SITES["C"])}


FAST_LINK = StagingModel(bandwidth_mb_s=50.0, latency_s=0.05)
SLOW_LINK = StagingModel(bandwidth_mb_s=5.0, latency_s=0.05)


@pytest.mark.parametrize(("app", "link", "expected"), [
    (CPU_HEAVY, FAST_LINK, "P2"),  # much computation, little I/O: the fastest CPU wins
    (IO_HEAVY, FAST_LINK, "P3"),   # I/O-bound: staging over a fast link pays off
    (IO_HEAVY, SLOW_LINK, "P1"),   # ...but not over a slow one: stay at the data
])
def test_choice_flips_with_the_application(tmp_path, app, link, expected) -> None:
    model = exported_model(app, tmp_path, "g")
    truth = true_costs(app, app.data_mb, link)
    assert min(truth, key=lambda p: truth[p]) == expected  # the scenario is what it claims
    best, costs = choose_plan(plans(model, app.data_mb, link))
    assert best == expected
    for name, cost in costs.items():
        assert cost.makespan_s == pytest.approx(truth[name], rel=0.10)
    p3 = costs["P3"]
    assert p3.critical_path == ("stage A->C", "G@C")
    assert p3.task_s["stage A->C"] == pytest.approx(link.predict(app.data_mb).mean)


def test_makespan_is_the_longest_path() -> None:
    dag = nx.DiGraph()
    dag.add_node("stage", time_s=10.0)
    dag.add_node("left", time_s=5.0)
    dag.add_node("right", time_s=30.0)
    dag.add_node("join", time_s=1.0)
    dag.add_edges_from([("stage", "left"), ("stage", "right"), ("left", "join"),
                        ("right", "join")])
    cost = plan_cost(dag)
    assert cost.makespan_s == 41.0 and cost.critical_path == ("stage", "right", "join")
    dag.add_edge("join", "stage")
    with pytest.raises(ConfigError, match="acyclic"):
        plan_cost(dag)


def test_predict_time_has_an_interval(tmp_path) -> None:
    model = exported_model(CPU_HEAVY, tmp_path, "cpu")
    p = predict_time(model, SITES["A"])
    assert p.mean == pytest.approx(CPU_HEAVY.T(SITES["A"]), rel=0.10)


def test_a_file_that_is_not_a_model(tmp_path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(ModelError, match="not a NIMO cost model"):
        load_model(bad)
    with pytest.raises(ConfigError, match="no model"):
        plan_cost(nx.DiGraph([("a", "b")]))
