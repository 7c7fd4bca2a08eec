"""After learning: run assignments the campaign never used, report the final model's accuracy
on them, and calibrate its intervals on runs it never trained on.

Calibration never touches the data that judges it (issue 9, item 5):

* a replay's external test set only ever scores the model (MAPE and 90% coverage); the model
  keeps its own leave-one-out calibration, or is calibrated on a separate calibration split
  withheld from the planner (``nimo replay --calibration-split N``);
* a live campaign's holdout runs are scored first (``holdout_mape_pct``,
  ``holdout_coverage_90``: the coverage BEFORE any recalibration); only then is the exported
  model recalibrated on them, so that a scheduler gets the best intervals there are. The
  figures reported for it are never those of the recalibrated model.

The recheck (the reference assignment run once more, last) neither scores nor calibrates: it
only tells whether the hosts drifted during the campaign (``recheck_drift_pct``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from nimo.campaign.loop import Campaign, CampaignResult, Observer
from nimo.campaign.metrics import External, holdout_shift, interval_coverage, mape_pct
from nimo.errors import ConfigError
from nimo.model.calibration import HOLDOUT
from nimo.records import RunOutcome, RunPurpose, RunRequest
from nimo.runner import Runner
from nimo.store.base import Store

Cases = list[tuple[dict[str, float], float]]


class OutcomeLog(Observer):
    """Keeps every told outcome (stored or fresh), for the holdout and overhead report."""

    def __init__(self) -> None:
        self.outcomes: list[RunOutcome] = []

    def iteration(self, outcome: RunOutcome, record: Any, model: Any) -> None:
        self.outcomes.append(outcome)


def holdout_requests(runner: Runner, n: int, seed: int, told: Sequence[RunOutcome]
                     ) -> list[RunRequest]:
    """``n`` random assignments of ``runner``'s space no told run used, numbered on from the
    last told run."""
    used = {tuple(sorted(o.request.assignment.items())) for o in told}
    space = runner.space
    unused = [c for c in space.candidates
              if tuple(sorted(space.as_dict(c).items())) not in used]
    if not unused:
        raise ConfigError("--holdout: every assignment was used for learning")
    rng = np.random.default_rng([int(seed), 0x401D])
    pick = rng.choice(len(unused), size=min(n, len(unused)), replace=False)
    first = max((o.request.run for o in told), default=0) + 1
    return [RunRequest(first + i, space.as_dict(unused[int(j)]), RunPurpose.HOLDOUT)
            for i, j in enumerate(pick)]


def run_holdout(
    campaign: Campaign, runner: Runner, n: int, seed: int, log: OutcomeLog,
    store: Store | None,
) -> tuple[dict[str, Any], Cases]:
    """Run ``n`` random assignments the campaign did not use, then the recheck: the report
    (MAPE and interval coverage of its final model, its shift, the recheck's drift,
    overheads) and the measured (assignment, T) pairs of the holdout runs."""
    requests = holdout_requests(runner, n, seed, log.outcomes)
    recheck = recheck_request(log.outcomes, requests[-1].run + 1)
    record = None
    if store is not None:
        store.queue_runs(campaign.name, [*requests, *([recheck] if recheck else [])])

        def record(outcome: RunOutcome) -> None:
            store.record_outcome(campaign.name, outcome)

    outcomes = runner.run_many(requests, on_outcome=record)
    rechecked = runner.run_many([recheck], on_outcome=record) if recheck else []
    cases = [(dict(o.request.assignment), o.sample.T) for o in outcomes
             if o.ok and o.sample is not None]
    model = campaign.result().model
    return {
        "holdout_runs": len(outcomes),
        "holdout_failed": len(outcomes) - len(cases),
        "holdout_mape_pct": mape_pct(model, cases),
        "holdout_coverage_90": interval_coverage(model, cases, 0.90),
        **holdout_shift(model, cases),
        **recheck_drift(log.outcomes, rechecked[0] if rechecked else None),
        **overheads(log.outcomes + outcomes + rechecked),
    }, cases


def recheck_request(told: Sequence[RunOutcome], run: int) -> RunRequest | None:
    """Run number ``run``: the reference assignment once more (the first successful learning
    run's when the reference failed); None with no successful learning run. Measured last,
    against the same assignment measured while learning, it tells hosts that sped up or
    slowed down during the campaign (drift) from a model that is off the holdout runs."""
    ok = [o for o in told if o.ok and o.sample is not None]
    if not ok:
        return None
    first = min(ok, key=lambda o: (o.request.purpose is not RunPurpose.REFERENCE,
                                   o.request.run))
    return RunRequest(run, dict(first.request.assignment), RunPurpose.RECHECK)


def recheck_drift(told: Sequence[RunOutcome], recheck: RunOutcome | None
                  ) -> dict[str, float | None]:
    """``recheck_drift_pct``: how much longer (+) or shorter (-) the recheck took than the
    median of the learning runs at its assignment; None without a successful recheck."""
    if recheck is None or not recheck.ok or recheck.sample is None:
        return {"recheck_drift_pct": None}
    same = recheck.request.assignment
    before = [o.sample.T for o in told if o.ok and o.sample is not None
              and o.request.purpose is not RunPurpose.RECHECK
              and dict(o.request.assignment) == dict(same)]
    if not before or float(np.median(before)) <= 0.0:
        return {"recheck_drift_pct": None}
    return {"recheck_drift_pct": 100.0 * (recheck.sample.T / float(np.median(before)) - 1.0)}


def overheads(outcomes: Sequence[RunOutcome]) -> dict[str, float | None]:
    """Mean set-up/teardown overhead and profile-measuring time per run."""
    if not outcomes:
        return {"overhead_s_per_run": None, "profile_s_per_run": None}
    return {
        "overhead_s_per_run": float(np.mean([o.overhead_s for o in outcomes])),
        "profile_s_per_run": float(np.mean([_profile_s(o) for o in outcomes])),
    }


def _profile_s(outcome: RunOutcome) -> float:
    """Seconds the run spent measuring its resource profile (0 when cached)."""
    meta = outcome.sample.meta if outcome.sample is not None else {}
    return float((meta.get("timing") or {}).get("profile_measure_s", 0.0))


def with_calibrated_model(result: CampaignResult, holdout: External,
                          calibration: External = ()) -> CampaignResult:
    """``result`` with its model's intervals calibrated on runs it never trained on and that
    no reported figure is computed from afterwards: the holdout runs (once scored), else a
    calibration split withheld from the planner; with neither the model keeps its own
    (leave-one-out) calibration. Never the external test set. Only the intervals change,
    never a prediction."""
    cases = holdout if holdout else calibration
    model = result.model
    if not cases or not hasattr(model, "calibrated_on"):
        return result
    return dataclasses.replace(result, model=model.calibrated_on(cases, HOLDOUT))
