"""Wiring of campaigns: create one in the store, run it with observers, write its JSON.

The replay CLI (``nimo replay``), the campaign CLI (``nimo campaign run|resume``) and the
service (``nimo serve``) call these; they hold no argument parsing. A fresh campaign and a
resumed one take the same path (``execute``): the planner is rebuilt from the stored design
and seed, and a ``ResumingRunner`` re-tells every finished run instead of running it again.

Stored campaign spec (``CampaignInfo.spec``), by kind:

* replay: ``dataset`` (mapping given to ``workbench.replay`` to rebuild the runner, see
  ``replay_runner_from_spec``), ``external`` (``[[assignment, T], ...]``), ``all_samples_s``,
  optional ``hosts`` (labels the service leases);
* live: ``inventory`` (path of the inventory YAML), ``holdout`` (N), ``hosts``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nimo.campaign import (
    Campaign,
    CampaignResult,
    Observer,
    ProgressTable,
    ResumingRunner,
    StoreRecorder,
    interval_coverage,
    mape_pct,
)
from nimo.errors import ConfigError, FileAccessError, StoreError
from nimo.model.cost import EXTERNAL, HOLDOUT
from nimo.records import RunOutcome, RunRequest
from nimo.runner import Runner
from nimo.store import CampaignInfo, SqlStore, StoredRun, open_store
from nimo.store.types import IN_PROGRESS
from workbench.processes import pid_alive

External = Sequence[tuple[Mapping[str, float], float]]
RunnerFactory = Callable[[CampaignInfo], Runner]


# -- public entry points -------------------------------------------------------------------
def launch_replay(
    runner: Runner,
    *,
    design: Any,
    seed: int,
    external: External = (),
    store_url: str | None = None,
    name: str | None = None,
    dataset: Mapping[str, Any] | None = None,
    json_out: str | Path | None = None,
    progress: bool = True,
    all_samples_s: float | None = None,
    hosts: Sequence[str] = (),
) -> CampaignResult:
    """Run a replay campaign and record it.

    ``runner`` is a ready ``workbench.replay.ReplayRunner``; ``design`` a ``DesignSpec`` or
    design mapping (stored as JSON so resume can rebuild the planner); ``dataset`` is stored
    as the campaign's dataset spec so that ``nimo campaign resume NAME`` can rebuild the
    runner (``replay_runner_from_spec``). ``external`` is the external test set;
    ``all_samples_s`` the learning time of sampling every assignment (defaults to the
    runner's ``all_samples_s`` attribute, if any). With ``store_url`` and ``name`` both None
    nothing is stored; with a name and no URL the default store is used. Raises
    ``StoreError`` if ``name`` exists.
    """
    if all_samples_s is None:
        all_samples_s = getattr(runner, "all_samples_s", None)
    spec = {
        "dataset": dict(dataset or {}),
        "external": [[dict(a), float(T)] for a, T in external],
        "all_samples_s": all_samples_s,
        "hosts": list(hosts),
    }
    return _launch("replay", runner, design, seed, spec, store_url, name, json_out, progress)


def launch_live(
    inventory_path: str | Path,
    *,
    design: Any = None,
    seed: int = 0,
    holdout: int = 0,
    store_url: str | None = None,
    name: str | None = None,
    json_out: str | Path | None = None,
    progress: bool = True,
) -> CampaignResult:
    """Run a live campaign on the inventory's hosts (``workbench.executor.open_runner``);
    with ``holdout`` N, then run N random unused assignments and report
    ``final.holdout_mape_pct`` and ``final.overhead_s_per_run``."""
    runner = open_live_runner(inventory_path)
    spec = {"inventory": str(Path(inventory_path).resolve()), "holdout": int(holdout),
            "hosts": list(getattr(getattr(runner, "inventory", None), "host_names", ()))}
    return _launch("live", runner, design, seed, spec, store_url, name, json_out, progress)


def resume(
    name: str,
    *,
    store_url: str | None = None,
    json_out: str | Path | None = None,
    progress: bool = True,
    runner_factory: RunnerFactory | None = None,
) -> CampaignResult:
    """Continue a stopped or crashed campaign exactly where it was (no finished run repeated).

    The run that was in flight is marked failed ``interrupted`` (live: its hosts are
    cleaned) and run again. Also starts a queued campaign (``nimo serve``).
    """
    store = open_store(store_url)
    try:
        info = store.campaign(name)
        _refuse_if_alive(info)
        if info.kind == "replay" and "external" not in info.spec and runner_factory is None:
            info = _fill_replay_spec(store, info)
        factory = runner_factory or open_runner_for
        runner = factory(info)
        interrupted = store.interrupt_in_flight(name)
        if interrupted and info.kind == "live":
            clean_hosts(info, interrupted)
        return execute(store, info, runner, json_out=json_out, progress=progress)
    finally:
        store.close()


# -- the shared path -------------------------------------------------------------------------
def execute(
    store: SqlStore | None,
    info: CampaignInfo,
    runner: Runner,
    *,
    json_out: str | Path | None = None,
    progress: bool = True,
    observers: Sequence[Observer] = (),
) -> CampaignResult:
    """Run (or continue) ``info`` on ``runner``; records in ``store`` unless it is None."""
    stored = store.outcomes(info.name) if store is not None else {}
    resuming = ResumingRunner(stored, runner)
    obs: list[Observer] = list(observers)
    if progress:
        obs.append(ProgressTable())
    if store is not None:
        obs.append(StoreRecorder(store, info.name))
        store.set_status(info.name, "running")
        store.update_spec(info.name, owner={"pid": os.getpid(), "host": socket.gethostname()})
    collector = _Outcomes()
    obs.append(collector)
    external = [(dict(a), float(T)) for a, T in info.spec.get("external") or ()]
    planner = build_planner(runner.space, info.design, info.seed,
                            getattr(runner, "kind", "occupancy"))
    campaign = Campaign(
        planner, resuming, external=external, observers=obs, name=info.name,
        design=info.design, all_samples_s=info.spec.get("all_samples_s"),
    )
    try:
        result = campaign.run()
        holdout = int(info.spec.get("holdout") or 0)
        holdout_cases: list[tuple[dict[str, float], float]] = []
        if holdout and not result.failed_streak:
            if store is not None:  # learning is over; the campaign ends with its holdout
                store.set_status(info.name, "holdout")
            extra, holdout_cases = run_holdout(campaign, resuming, holdout, info.seed,
                                               collector, store)
            result = campaign.result(**extra)
            if store is not None:
                store.update_spec(info.name, holdout_result=extra)
                store.set_status(info.name, "done")
        if not result.failed_streak:
            result = _with_calibrated_model(result, holdout_cases, external)
            if store is not None and result.model is not None and result.iterations:
                # the model handed over (refitted when the planner stopped, recalibrated) is
                # the last version: `nimo model export` gives what --json gives
                store.save_model(info.name, result.iterations[-1].run, result.model.to_dict())
    finally:
        runner.close()
    if json_out is not None:
        write_json(result, json_out)
    return result


def _launch(
    kind: str, runner: Runner, design: Any, seed: int, spec: dict[str, Any],
    store_url: str | None, name: str | None, json_out: str | Path | None, progress: bool,
) -> CampaignResult:
    design_dict = design_to_dict(design)
    if store_url is None and name is None:
        info = CampaignInfo(name=f"{kind}-unsaved", kind=kind, status="running",
                            design=design_dict, spec=spec, seed=int(seed))
        return execute(None, info, runner, json_out=json_out, progress=progress)
    store = open_store(store_url)
    try:
        name = name or f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}"
        info = store.create_campaign(name, kind, design=design_dict, spec=spec, seed=seed)
        return execute(store, info, runner, json_out=json_out, progress=progress)
    except BaseException:
        runner.close()
        raise
    finally:
        store.close()


class _Outcomes(Observer):
    """Keeps every told outcome (stored or fresh), for the holdout and overhead report."""

    def __init__(self) -> None:
        self.outcomes: list[RunOutcome] = []

    def iteration(self, outcome: RunOutcome, record: Any, model: Any) -> None:
        self.outcomes.append(outcome)


def run_holdout(
    campaign: Campaign, runner: Runner, n: int, seed: int, collector: _Outcomes,
    store: SqlStore | None,
) -> tuple[dict[str, Any], list[tuple[dict[str, float], float]]]:
    """Run ``n`` random assignments the campaign did not use: the report (MAPE and interval
    coverage of its final model, overheads) and the measured (assignment, T) pairs."""
    used = {tuple(sorted(o.request.assignment.items())) for o in collector.outcomes}
    space = runner.space
    unused = [c for c in space.candidates
              if tuple(sorted(space.as_dict(c).items())) not in used]
    if not unused:
        raise ConfigError("--holdout: every assignment was used for learning")
    rng = np.random.default_rng([int(seed), 0x401D])
    pick = rng.choice(len(unused), size=min(n, len(unused)), replace=False)
    first = max((o.request.run for o in collector.outcomes), default=0) + 1
    requests = [RunRequest(first + i, space.as_dict(unused[int(j)]), "holdout")
                for i, j in enumerate(pick)]
    recorder = StoreRecorder(store, campaign.name) if store is not None else None
    if recorder is not None:
        recorder.asked(requests)
    outcomes = runner.run_many(requests, on_outcome=recorder.outcome if recorder else None)
    ok = [o for o in outcomes if o.ok]
    cases = [(dict(o.request.assignment), o.sample.T) for o in ok]
    model = campaign.result().model
    everything = collector.outcomes + outcomes
    return {
        "holdout_runs": len(outcomes),
        "holdout_failed": len(outcomes) - len(ok),
        "holdout_mape_pct": mape_pct(model, cases),
        "holdout_coverage_90": interval_coverage(model, cases, 0.90),
        "overhead_s_per_run": float(np.mean([o.overhead_s for o in everything]))
        if everything else None,
        "profile_s_per_run": float(np.mean([_profile_s(o) for o in everything]))
        if everything else None,
    }, cases


def _with_calibrated_model(result: CampaignResult, holdout: Sequence[tuple[Any, float]],
                           external: Sequence[tuple[Any, float]]) -> CampaignResult:
    """``result`` with its model's intervals calibrated on runs it never trained on: the
    holdout runs, else the replay's external test set (their mean T). Only the intervals
    change, never a prediction."""
    cases, method = (holdout, HOLDOUT) if holdout else (external, EXTERNAL)
    model = result.model
    if not hasattr(model, "calibrated_on"):
        return result
    return dataclasses.replace(result, model=model.calibrated_on(cases, method))


def _profile_s(outcome: RunOutcome) -> float:
    """Seconds the run spent measuring its resource profile (0 when cached)."""
    meta = outcome.sample.meta if outcome.sample is not None else {}
    return float((meta.get("timing") or {}).get("profile_measure_s", 0.0))


# -- pieces other modules plug in -------------------------------------------------------------
def design_to_dict(design: Any) -> dict[str, Any]:
    """A design as the JSON mapping stored with the campaign (``DesignSpec.to_dict``)."""
    from nimo.planner.design import parse_design

    if design is None or isinstance(design, Mapping):
        design = parse_design(design)
    return json.loads(json.dumps(design.to_dict()))


def build_planner(space: Any, design: Mapping[str, Any], seed: int,
                  kind: str = "occupancy") -> Any:
    """The planner the stored design and seed describe (deterministic)."""
    from nimo.planner import make_planner
    from nimo.planner.design import parse_design

    return make_planner(space, parse_design(design), int(seed), kind)


def open_runner_for(info: CampaignInfo) -> Runner:
    """Rebuild the runner of a stored campaign."""
    if info.kind == "live":
        inventory = info.spec.get("inventory")
        if not inventory:
            raise StoreError(f"live campaign {info.name!r} has no inventory in the store")
        return open_live_runner(inventory)
    return replay_runner_from_spec(info.spec.get("dataset") or {})


def open_live_runner(inventory_path: str | Path) -> Runner:
    try:
        from workbench.executor import open_runner
    except ImportError as e:
        raise ConfigError("live campaigns need workbench.executor, which failed to import",
                          hint=str(e)) from None
    return open_runner(inventory_path)


def replay_runner_from_spec(dataset: Mapping[str, Any]) -> Runner:
    """``workbench.replay.ReplayRunner.from_spec(dataset)``; ``dataset`` holds the arguments
    of ``workbench.replay.open_replay``."""
    if not dataset:
        raise StoreError("this replay campaign was stored without its dataset spec",
                         hint="it can only be resumed by the process that made it")
    from workbench import replay

    return replay.ReplayRunner.from_spec(dict(dataset))


def _fill_replay_spec(store: SqlStore, info: CampaignInfo) -> CampaignInfo:
    """A submitted replay campaign learns its external test set when it first starts."""
    from workbench.replay import open_replay

    runner, external = open_replay(**dict(info.spec.get("dataset") or {}))
    runner.close()
    return store.update_spec(
        info.name, external=[[dict(a), float(T)] for a, T in external],
        all_samples_s=runner.all_samples_s,
    )


def clean_hosts(info: CampaignInfo, interrupted: Sequence[StoredRun]) -> None:
    """Sweep ``nimo-`` leftovers of the runs a crash interrupted (``workbench.clean``)."""
    from workbench import clean

    runs = ", ".join(str(r.run) for r in interrupted)
    for host, report in clean.clean_inventory(info.spec["inventory"]).items():
        if isinstance(report, BaseException):
            print(f"nimo: warning: could not clean {host} after interrupted run(s) {runs}: "
                  f"{report}", file=sys.stderr)


def _refuse_if_alive(info: CampaignInfo) -> None:
    owner = info.spec.get("owner") or {}
    if info.status not in IN_PROGRESS or owner.get("host") != socket.gethostname():
        return
    pid = int(owner.get("pid") or 0)
    if pid and pid != os.getpid() and pid_alive(pid):
        raise StoreError(f"campaign {info.name!r} is running (pid {pid})",
                         hint="stop that process first")


def write_json(result: CampaignResult, path: str | Path) -> Path:
    """Write ``result.to_dict()`` (non-finite numbers as null); ``-`` means stdout."""
    text = json.dumps(_finite(result.to_dict()), indent=2, allow_nan=False) + "\n"
    if str(path) == "-":
        print(text, end="")
        return Path("-")
    path = Path(path)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def _finite(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Mapping):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_finite(x) for x in v]
    return v


__all__ = [
    "build_planner",
    "design_to_dict",
    "execute",
    "launch_live",
    "launch_replay",
    "open_runner_for",
    "resume",
    "write_json",
]
