"""The Python API: `import nimo` stays cheap and pure, ask/tell with your own runner, store
records and DataFrames, a clear error without pandas."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import nimo
from nimo.api import MissingExtra

ROOT = Path(__file__).resolve().parents[2]
SPACE = nimo.ResourceSpace((nimo.Attribute("cpu", (1.0, 2.0, 3.0, 4.0)),
                            nimo.Attribute("lat", (0.0, 5.0, 10.0), direction=-1,
                                           resource="network")))


def truth(a: dict[str, float]) -> float:
    return 60.0 / a["cpu"] + 3.0 * a["lat"]


def test_import_nimo_loads_neither_the_api_nor_workbench() -> None:
    code = ("import sys, nimo\nprint(sorted(m for m in sys.modules if m in "
            "('nimo.api', 'nimo.store', 'nimo.planner') or m.startswith('workbench')))\n"
            "nimo.learn\nprint('nimo.api' in sys.modules, "
            "any(m.startswith('workbench') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout
    assert out.splitlines() == ["[]", "True False"]


def test_learn_with_a_function_as_the_runner() -> None:
    design = {"strategy": "random", "stop": {"error_pct": 1, "min_samples": 6},
              "predictors": {"mode": "auto"}}
    result = nimo.learn(SPACE, truth, design=design, kind="direct", seed=3)
    assert result.model is not None and 6 <= len(result.records) <= 12
    assert result.model.predict({"cpu": 3.0, "lat": 5.0}) == pytest.approx(35.0, rel=0.05)
    capped = nimo.learn(SPACE, truth, design=design, kind="direct", max_runs=4)
    assert len(capped.records) == 4


def test_a_failing_runner_marks_runs_failed_and_goes_on() -> None:
    def flaky(a: dict[str, float]) -> float:
        if a["cpu"] == 1.0:
            raise RuntimeError("host vanished")
        return truth(a)

    design = {"strategy": "random", "stop": {"error_pct": 1, "min_samples": 5},
              "predictors": {"mode": "auto"}}
    result = nimo.learn(SPACE, flaky, design=design, kind="direct", max_runs=10)
    failed = [r for r in result.records if r.status != "done"]
    assert failed and all("RuntimeError: host vanished" in (r.reason or "") for r in failed)


def test_store_records_and_dataframes(tmp_path: Path) -> None:
    from workbench import api

    url = f"sqlite:///{tmp_path}/s.db"
    result = api.replay("cpu_bound", seed=1, store=url, name="c1")
    campaigns = api.campaign_records(url)
    assert [c["name"] for c in campaigns] == ["c1"] and campaigns[0]["design"] == "recommended"
    samples = nimo.sample_records("c1", url)
    assert len(samples) == result.to_dict()["final"]["runs"]
    assert {"run", "T", "cpu_mhz"} <= set(samples[0])
    frame = nimo.to_dataframe(samples)
    assert list(frame["run"]) == [s["run"] for s in samples]
    log = nimo.to_dataframe(nimo.iteration_records("c1", url))
    assert log["external_mape_pct"].iloc[-1] == pytest.approx(
        result.iterations[-1].external_mape_pct)


def test_model_round_trip_and_predict(tmp_path: Path) -> None:
    from workbench import api

    result = api.replay("memory_cliff", seed=1)
    path = result.model.save(tmp_path / "m.json")
    p = nimo.predict(str(path), cpu_mhz=930, mem_mb=256, latency_ms=7.2, bandwidth_mbit=60)
    assert p.lo < p.mean < p.hi
    assert p.mean == pytest.approx(nimo.load_model(path).predict(
        {"cpu_mhz": 930, "mem_mb": 256, "latency_ms": 7.2, "bandwidth_mbit": 60}))


def test_to_dataframe_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(MissingExtra, match=r"pandas.*nimo-workbench\[pandas\]"):
        nimo.to_dataframe([{"a": 1}])
