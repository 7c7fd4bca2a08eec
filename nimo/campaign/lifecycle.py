"""A campaign's life in a store: created (or unsaved), run or resumed, finished.

A fresh campaign and a resumed one take the same path (``execute``): the planner is rebuilt
from the stored design and seed, and a ``ResumingRunner`` re-tells every finished run instead
of running it again. With a holdout, the campaign then runs it (status ``holdout``); the
model handed over is calibrated and stored as the last version.

Stored campaign spec keys read here: ``external`` (``[[assignment, T], ...]``: scores only),
``calibration`` (the same form: calibrates only),
``family_result`` (written: a live campaign's ``final.family``, ``nimo.campaign.family``),
``final_result`` (written: the errors of the model handed over, ``_hand_over``),
``all_samples_s`` and ``holdout`` (N); ``owner`` (pid and host of the process executing the
campaign, for display: who owns a campaign is the store's claim) is written here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any

from nimo.campaign.family import design_family, family_report, measured_cases, space_data
from nimo.campaign.holdout import Cases, OutcomeLog, run_holdout, with_calibrated_model
from nimo.campaign.loop import Campaign, CampaignResult, Observer
from nimo.campaign.metrics import training_record, unmeasured_knobs
from nimo.campaign.recorder import StoreRecorder
from nimo.campaign.runners import ResumingRunner
from nimo.errors import interrupt_reason
from nimo.finite import finite_or_none
from nimo.planner.base import Planner
from nimo.records import CampaignInfo, CampaignKind, CampaignStatus, RunOutcome
from nimo.records.campaigns import check_campaign_name
from nimo.runner import Runner
from nimo.space import ResourceSpace
from nimo.store.base import Store


def design_to_dict(design: Any) -> dict[str, Any]:
    """A design as the JSON mapping stored with the campaign (``DesignSpec.to_dict``)."""
    from nimo.planner.design import parse_design

    if design is None or isinstance(design, Mapping):
        design = parse_design(design)
    return json.loads(json.dumps(design.to_dict()))


def with_batch(design: Mapping[str, Any], concurrency: int) -> dict[str, Any]:
    """The design a new campaign stores: one that sets no ``batch`` asks for as many
    training runs at once as its runner runs (``Runner.concurrency``). Fixed when the
    campaign is created, so a resume asks the same batches; absent means 1."""
    d = dict(design)
    if d.get("batch") is None and concurrency > 1:
        d["batch"] = int(concurrency)
    return d


def build_planner(space: ResourceSpace, design: Mapping[str, Any], seed: int,
                  kind: str = "occupancy") -> Planner:
    """The planner the stored design and seed describe (deterministic)."""
    from nimo.planner import make_planner
    from nimo.planner.design import parse_design

    return make_planner(space, parse_design(design), int(seed), kind)


def new_campaign(
    store: Store | None, kind: CampaignKind, name: str | None, design: Any, seed: int,
    spec: Mapping[str, Any], concurrency: int = 1,
) -> CampaignInfo:
    """Create the campaign in ``store`` (named ``KIND-DATE-TIME`` by default; ``StoreError``
    if the name is taken), or describe an unsaved one when ``store`` is None; a design
    without ``batch`` gets the runner's ``concurrency`` (``with_batch``)."""
    design_dict = design_to_dict(with_batch(design_to_dict(design), concurrency))
    if store is None:
        return CampaignInfo(name=f"{kind}-unsaved", kind=kind, status=CampaignStatus.RUNNING,
                            design=design_dict, spec=dict(spec), seed=int(seed))
    name = check_campaign_name(name) if name is not None else (
        f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}")
    return store.create_campaign(name, kind, design=design_dict, spec=spec, seed=seed)


def external_cases(info: CampaignInfo) -> Cases:
    """The campaign's external test set as (assignment, mean measured T) pairs."""
    return [(dict(a), float(T)) for a, T in info.spec.get("external") or ()]


def calibration_cases(info: CampaignInfo) -> Cases:
    """The stored calibration split (withheld from the planner, never scored): (assignment,
    mean measured T) pairs; empty unless asked for (replay's ``--calibration-split``)."""
    return [(dict(a), float(T)) for a, T in info.spec.get("calibration") or ()]


def execute(
    store: Store | None, info: CampaignInfo, runner: Runner, *,
    observers: Sequence[Observer] = (),
) -> CampaignResult:
    """Run (or continue) ``info`` on ``runner``, then its holdout; records in ``store``
    unless it is None. ``runner`` is closed on return."""
    resuming = ResumingRunner(store.outcomes(info.name) if store is not None else {}, runner)
    log = OutcomeLog()
    obs = [*observers, *([StoreRecorder(store, info.name)] if store is not None else []), log]
    if store is not None:
        _claim(store, info.name)
    planner = build_planner(runner.space, info.design, info.seed, runner.kind)
    campaign = Campaign(
        planner, resuming, external=external_cases(info), observers=obs, name=info.name,
        design=info.design, all_samples_s=info.spec.get("all_samples_s"),
    )
    try:
        result = campaign.run()
        if result.failed_streak:
            return result
        try:
            return _after_learning(store, info, campaign, resuming, log, result)
        except KeyboardInterrupt as e:  # not handed over yet: not done (resume finishes it)
            if store is not None:
                store.set_status(info.name, CampaignStatus.INTERRUPTED,
                                 stopped_because=f"interrupted ({interrupt_reason(e)}) after "
                                                 "learning, before the model was handed over")
            raise
    finally:
        runner.close()


def _after_learning(store: Store | None, info: CampaignInfo, campaign: Campaign,
                    runner: Runner, log: OutcomeLog, result: CampaignResult
                    ) -> CampaignResult:
    """The holdout runs, the calibrated model and its family, handed over."""
    holdout: Cases = []
    if int(info.spec.get("holdout") or 0):
        result, holdout = _holdout(store, info, campaign, runner, log)
    result = with_calibrated_model(result, holdout, calibration_cases(info))
    result = with_family(store, info, runner.space, result, log.outcomes, holdout)
    return _hand_over(store, info, with_unmeasured_marked(result, log.outcomes))


def _claim(store: Store, name: str) -> None:
    """Mark the campaign running, by this process."""
    store.set_status(name, CampaignStatus.RUNNING)
    host = os.environ.get("NIMO_HOSTNAME") or socket.gethostname()
    store.update_spec(name, owner={"pid": os.getpid(), "host": host})


def _holdout(
    store: Store | None, info: CampaignInfo, campaign: Campaign, runner: Runner,
    log: OutcomeLog,
) -> tuple[CampaignResult, Cases]:
    """Learning is over; the campaign ends with its holdout runs."""
    if store is not None:
        store.set_status(info.name, CampaignStatus.HOLDOUT)
    extra, cases = run_holdout(campaign, runner, int(info.spec["holdout"]), info.seed, log,
                               store)
    if store is not None:
        store.update_spec(info.name, holdout_result=extra)
        store.set_status(info.name, CampaignStatus.DONE)
    return campaign.result(**extra), cases


def with_family(store: Store | None, info: CampaignInfo, space: ResourceSpace,
                result: CampaignResult, training: Sequence[RunOutcome], holdout: Cases,
                ) -> CampaignResult:
    """A live campaign whose design names ``predictors.family``: ``final.family``, that
    family fitted on the training runs and scored on the holdout runs (also stored in the
    spec as ``family_result``, which ``nimo model export --family`` writes). A replay adds
    its own (``workbench.replay_family``), scored on its external test set."""
    if info.kind != CampaignKind.LIVE or design_family(info.design) is None:
        return result
    train = space_data(space, measured_cases(training), seed=info.seed)
    family = family_report(info.design, train, [space.named(a) for a, _ in holdout],
                           [t for _, t in holdout], scored_on="holdout")
    if store is not None:
        store.update_spec(info.name, family_result=family)
    return dataclasses.replace(result, final_extra={**result.final_extra, "family": family})


def with_unmeasured_marked(result: CampaignResult, outcomes: Sequence[RunOutcome]
                           ) -> CampaignResult:
    """``result`` with its model marking the knobs no successful run varied (every run that
    varied them failed), so that a prediction never hides that it ignores them."""
    names = [u.knob for u in unmeasured_knobs(
        (o.request.assignment, o.ok) for o in outcomes)]
    model = result.model
    if not names or not hasattr(model, "with_unmeasured"):
        return result
    return dataclasses.replace(result, model=model.with_unmeasured(names))


def _hand_over(store: Store | None, info: CampaignInfo, result: CampaignResult
               ) -> CampaignResult:
    """Store the model handed over (refitted when the planner stopped, recalibrated) as the
    last version: ``nimo model export`` gives what ``--json`` gives; and its errors as the
    spec's ``final_result`` (``run``: after which run), so that ``status`` shows what the
    summary shows, not the errors of the model before that refit."""
    if store is not None and result.model is not None and result.iterations:
        run = result.iterations[-1].run
        store.save_model(info.name, run, result.model.to_dict())
        store.update_spec(info.name, final_result={
            "run": run,
            "internal_error_pct": finite_or_none(
                training_record(result.model).get("internal_error_pct")),
            "external_mape_pct": finite_or_none(result.final_extra.get("external_mape_pct"))})
    return result

