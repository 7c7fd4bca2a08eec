"""The Python API of the learning core (``import nimo`` re-exports these names).

Drive the planner with your own runner (any function that measures an assignment)::

    import nimo
    space = nimo.ResourceSpace((nimo.Attribute("cpu", (1, 2, 4, 8)),
                                nimo.Attribute("lat", (0, 5, 10), direction=-1)))
    result = nimo.learn(space, lambda a: my_run(a), design=my_design, kind="direct")
    result.model.predict({"cpu": 4, "lat": 5})

or step by step: ``planner = nimo.make_planner(space, design)``, then ``planner.ask()`` (a
list of ``RunRequest``, ``[]`` once stopped) and ``planner.tell(nimo.outcome(request, T))``.

Read a store (``nimo.open_store(URL)``): ``campaign_records``, ``sample_records``,
``iteration_records`` give plain dicts; ``to_dataframe`` turns them into a pandas DataFrame
(pandas is optional: ``pip install 'nimo-workbench[pandas]'``). Load an exported model with
``load_model(path)`` and call ``predict``. Replaying a campaign on a CSV and the design
presets need files and live in ``workbench.api`` (which re-exports all of this).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nimo.errors import NimoError
from nimo.model import CostModel, Prediction, load_model
from nimo.planner import DesignSpec, Planner, make_planner, parse_design
from nimo.records import IterationRecord, RunOutcome, RunRequest, RunStatus, Sample
from nimo.space import Attribute, ResourceSpace
from nimo.store import open_store
from nimo.store.base import Store

Measure = Callable[[Mapping[str, float]], "float | Sample"]
PANDAS_EXTRA = "pip install 'nimo-workbench[pandas]'"


class MissingExtra(NimoError):
    """Raised when an optional dependency (pandas) is not installed; names the extra."""


@dataclass(frozen=True)
class LearnResult:
    """What ``learn`` produced: the model, one record per told run, why it stopped."""

    model: CostModel | None
    records: tuple[IterationRecord, ...]
    stopped_because: str | None


def outcome(request: RunRequest, measured: float | Sample | None,
            reason: str | None = None) -> RunOutcome:
    """The outcome to ``tell``: a run time in seconds (or a full ``Sample``); None (with
    ``reason``) for a run that failed."""
    if measured is None:
        return RunOutcome(request, RunStatus.FAILED, None, reason or "failed")
    sample = measured if isinstance(measured, Sample) else Sample(
        dict(request.assignment), T=float(measured))
    return RunOutcome(request, RunStatus.DONE, sample)


def learn(space: ResourceSpace, measure: Measure,
          design: DesignSpec | Mapping[str, Any] | None = None, seed: int = 0,
          kind: str = "direct", max_runs: int | None = None) -> LearnResult:
    """Algorithm 1 with your own runner: ``measure(assignment)`` returns the run time (or a
    ``Sample`` with occupancies, for ``kind="occupancy"``); an exception it raises marks the
    run failed and the planner goes on. ``max_runs`` caps the runs on top of the design."""
    planner = make_planner(space, design, seed, kind)
    records: list[IterationRecord] = []
    while max_runs is None or len(records) < max_runs:
        requests = planner.ask()
        if not requests:
            break
        for request in requests[: None if max_runs is None else max_runs - len(records)]:
            try:
                result = outcome(request, measure(dict(request.assignment)))
            except Exception as e:  # the user's runner failed this run
                result = outcome(request, None, f"{type(e).__name__}: {e}")
            records.append(planner.tell(result))
    return LearnResult(planner.model(), tuple(records), planner.stopped_because)


def predict(model: CostModel | str | Path, assignment: Mapping[str, float] | None = None,
            level: float = 0.90, **values: float) -> Prediction:
    """The predicted run time and its ``level`` interval for ``assignment`` (or keyword
    values) under ``model`` (a ``CostModel`` or the path of an exported model)."""
    loaded = model if isinstance(model, CostModel) else load_model(model)
    return loaded.predict_interval({**(assignment or {}), **values}, level)


# -- reading a store ----------------------------------------------------------------------
def _store(store: Store | str | None) -> tuple[Store, bool]:
    if isinstance(store, Store):
        return store, False
    return open_store(store, create=False), True  # readers never create a store


def campaign_records(store: Store | str | None = None) -> list[dict[str, Any]]:
    """Every campaign of a store (a ``Store`` or its URL) as a dict: name, kind, status,
    design name, seed, stopped_because, created_at, updated_at."""
    st, close = _store(store)
    try:
        return [{"name": c.name, "kind": str(c.kind), "status": str(c.status),
                 "design": c.design.get("name"), "seed": c.seed,
                 "stopped_because": c.stopped_because, "created_at": c.created_at,
                 "updated_at": c.updated_at} for c in st.campaigns()]
    finally:
        if close:
            st.close()


def sample_records(name: str, store: Store | str | None = None) -> list[dict[str, Any]]:
    """A campaign's measured samples, one dict per run: ``run``, the assignment's
    attributes, ``T``, ``D``, ``U``, ``o_a``, ``o_n``, ``o_d``, ``cost_s``."""
    st, close = _store(store)
    try:
        return [{"run": run, **dict(s.assignment), "T": s.T, "D": s.D, "U": s.U, "o_a": s.o_a,
                 "o_n": s.o_n, "o_d": s.o_d, "cost_s": s.cost_s}
                for run, s in st.samples(name)]
    finally:
        if close:
            st.close()


def iteration_records(name: str, store: Store | str | None = None) -> list[dict[str, Any]]:
    """A campaign's convergence log: run, purpose, predictor, learning time and errors."""
    st, close = _store(store)
    try:
        return [{"run": r.run, "purpose": r.purpose, "predictor": r.predictor,
                 "acquisition_s": r.acquisition_s, "internal_error_pct": r.internal_error_pct,
                 "external_mape_pct": r.external_mape_pct, **dict(r.assignment)}
                for r in st.iterations(name)]
    finally:
        if close:
            st.close()


def to_dataframe(records: Iterable[Mapping[str, Any]]) -> Any:
    """Records (``sample_records`` ...) as a pandas DataFrame; needs the pandas extra."""
    try:
        pandas = importlib.import_module("pandas")
    except ImportError:
        raise MissingExtra("to_dataframe needs pandas, which is not installed",
                           hint=PANDAS_EXTRA) from None
    return pandas.DataFrame.from_records(list(records))


__all__: Sequence[str] = [
    "Attribute", "CostModel", "DesignSpec", "IterationRecord", "LearnResult", "MissingExtra",
    "Planner", "Prediction", "ResourceSpace", "RunOutcome", "RunRequest", "Sample",
    "campaign_records", "iteration_records", "learn", "load_model", "make_planner", "open_store",
    "outcome", "parse_design", "predict", "sample_records", "to_dataframe",
]
