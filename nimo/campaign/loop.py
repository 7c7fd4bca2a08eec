"""The campaign loop (Algorithm 1's outer loop): ask -> run_many -> tell -> observers.

A campaign is resumable because the planner is deterministic for its seed and the outcomes it
is told: ``ResumingRunner`` answers the requests already finished from the store, so a resumed
campaign re-tells exactly what the crashed one had learned and runs only what is left.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nimo.campaign.metrics import External, interval_coverage, mape_pct
from nimo.errors import NimoError, PlanExhausted
from nimo.planner.base import Planner
from nimo.records import IterationRecord, RunOutcome, RunRequest
from nimo.runner import Runner


class Observer:
    """Hooks called by ``Campaign.run``; all are no-ops by default."""

    def asked(self, requests: Sequence[RunRequest]) -> None:
        """A batch is about to run."""

    def outcome(self, outcome: RunOutcome) -> None:
        """A run finished (called before the next experiment starts: commit here)."""

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        """The planner was told ``outcome``; ``record.external_mape_pct`` is filled."""

    def finished(self, result: CampaignResult) -> None:
        """The planner stopped."""

    def aborted(self, error: BaseException) -> None:
        """The loop was left by an exception (Ctrl-C, store or runner error)."""


@dataclass(frozen=True)
class CampaignResult:
    """What a campaign produced; ``to_dict()`` is the ``--json`` document."""

    name: str
    design: Mapping[str, Any]
    iterations: tuple[IterationRecord, ...]
    stopped_because: str | None
    model: Any = None
    all_samples_s: float | None = None
    final_extra: Mapping[str, Any] = field(default_factory=dict)
    failed_streak: tuple[int, ...] = ()  # runs that stopped a broken campaign (run again)

    @property
    def external_mape_pct(self) -> float | None:
        for rec in reversed(self.iterations):
            if rec.external_mape_pct is not None:
                return rec.external_mape_pct
        return None

    @property
    def acquisition_s(self) -> float:
        return self.iterations[-1].acquisition_s if self.iterations else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "design": dict(self.design),
            "iterations": [_iteration_dict(r) for r in self.iterations],
            "stopped_because": self.stopped_because,
            "final": {
                "external_mape_pct": self.external_mape_pct,
                "acquisition_s": self.acquisition_s,
                "all_samples_s": self.all_samples_s,
                "runs": len(self.iterations),
                **dict(self.final_extra),
            },
            "model": self.model.to_dict() if self.model is not None else None,
        }


def _iteration_dict(r: IterationRecord) -> dict[str, Any]:
    d = r.to_dict()
    d["attributes"] = {k: list(v) for k, v in r.attributes.items()}
    return d


def current_model(planner: Planner) -> Any:
    """The planner's model, or None while it cannot fit one yet."""
    try:
        return planner.model()
    except NimoError:
        return None


class Campaign:
    """Run ``planner`` on ``runner`` until it stops; observers see every step."""

    def __init__(
        self,
        planner: Planner,
        runner: Runner,
        *,
        external: External = (),
        observers: Iterable[Observer] = (),
        name: str = "campaign",
        design: Mapping[str, Any] | None = None,
        all_samples_s: float | None = None,
        max_failed_in_row: int | None = 10,
    ) -> None:
        self.planner = planner
        self.runner = runner
        self.external = [(dict(a), float(T)) for a, T in external]
        self.observers = list(observers)
        self.name = name
        self.design = dict(design or {})
        self.all_samples_s = all_samples_s
        self.records: list[IterationRecord] = []
        self.max_failed_in_row = max_failed_in_row
        self.failed_streak: list[int] = []
        self.stopped_because: str | None = None

    def _notify(self, hook: str, *args: Any) -> None:
        for obs in self.observers:
            getattr(obs, hook)(*args)

    def step(self) -> bool:
        """One ask/run/tell round; False once the planner has nothing more to run, or after
        ``max_failed_in_row`` failed runs in a row (the workbench is broken, not the plan)."""
        if self.stopped_because is not None:
            return False
        try:
            batch = self.planner.ask()
        except PlanExhausted as e:  # every candidate ran or failed: the plan is over
            if not self.failed_streak:
                raise
            self.stopped_because = (f"{len(self.failed_streak)} failed runs in a row and "
                                    f"{e} (last: {self.records[-1].reason})")
            return False
        if not batch:
            return False
        self._notify("asked", batch)
        outcomes = self.runner.run_many(batch, on_outcome=lambda o: self._notify("outcome", o))
        for outcome in outcomes:
            self._tell(outcome)
        return self.stopped_because is None

    def _tell(self, outcome: RunOutcome) -> None:
        record = self.planner.tell(outcome)
        model = current_model(self.planner)
        record = dataclasses.replace(record, external_mape_pct=mape_pct(model, self.external))
        self.records.append(record)
        self._notify("iteration", outcome, record, model)
        self.failed_streak = [] if outcome.ok else [*self.failed_streak, outcome.request.run]
        if self.max_failed_in_row and len(self.failed_streak) >= self.max_failed_in_row:
            self.stopped_because = (f"{len(self.failed_streak)} failed runs in a row "
                                    f"(last: {outcome.reason})")

    def run(self) -> CampaignResult:
        """Step until the plan ends; observers hear ``finished`` with the result, or
        ``aborted`` with whatever stopped it, also while the result is being made."""
        try:
            while self.step():
                pass
            self._fail_if_nothing_succeeded()
            result = self.result()
        except BaseException as e:
            self._notify("aborted", e)
            raise
        self._notify("finished", result)
        return result

    def _fail_if_nothing_succeeded(self) -> None:
        """A campaign whose every run failed is broken, however its stop rule ended it
        (a run budget spent on failures): it fails, and its runs are run again on resume."""
        if self.stopped_because is None and self.failed_streak \
                and not any(r.status == "done" for r in self.records):
            self.stopped_because = (f"{len(self.failed_streak)} failed runs in a row and no "
                                    f"run succeeded (last: {self.records[-1].reason})")

    def result(self, **final_extra: Any) -> CampaignResult:
        model = current_model(self.planner)
        if self.external and model is not None:
            # The planner may refit after the last told run (e.g. when it stops); report the
            # accuracy of the model it hands over.
            final_extra.setdefault("external_mape_pct", mape_pct(model, self.external))
            # its 90% interval on the same unseen runs (never calibrated on them)
            final_extra.setdefault("external_coverage_90",
                                   interval_coverage(model, self.external, 0.90))
        return CampaignResult(
            name=self.name,
            design=self.design,
            iterations=tuple(self.records),
            stopped_because=self.stopped_because or self.planner.stopped_because,
            model=current_model(self.planner),
            all_samples_s=self.all_samples_s,
            final_extra=final_extra,
            failed_streak=tuple(self.failed_streak) if self.stopped_because else (),
        )
