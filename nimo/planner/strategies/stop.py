"""Stop rule: the conditions that end learning, each enabled by a key of a design's ``stop:``.

Every condition has a stage: ``budget`` conditions are checked before each ask,
``converged`` and ``plateau`` ones after each training sample (NIMO also needs the committee
to agree before it accepts convergence, see :class:`CommitteeAgreement`). To add one:
subclass ``StopCondition`` (``from_rule`` returns None while its key is unset), add it to
``STOP_CONDITIONS`` under its key, and declare the key on ``nimo.planner.design.StopRule``.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from nimo.planner.strategies.scoring import committee_spread

if TYPE_CHECKING:
    from nimo.planner.design import StopRule
    from nimo.planner.strategies.view import PlanView

STAGES = ("budget", "converged", "plateau")
PLATEAU_GAIN = 0.5  # points of internal error that count as progress
AGREEMENT_POOL = 4000


@dataclass(frozen=True)
class Progress:
    """What the stop conditions read: runs told, learning seconds, the internal error (%),
    training samples, the internal error after each training run, and each training run's
    prospective error (%: the model of its time predicted it before it was measured)."""

    runs: int
    learning_s: float
    internal_error: float | None
    samples: int
    error_history: Sequence[float]
    prospective: Sequence[float] = ()


class StopCondition(abc.ABC):
    """One reason to stop learning."""

    stage: ClassVar[str] = "converged"

    @classmethod
    @abc.abstractmethod
    def from_rule(cls, rule: StopRule) -> StopCondition | None:
        """The condition the design's stop rule asks for, or None if it does not."""

    @abc.abstractmethod
    def reason(self, progress: Progress) -> str | None:
        """Why learning should stop now, or None."""


class RunBudget(StopCondition):
    stage = "budget"

    def __init__(self, max_runs: int) -> None:
        self.max_runs = max_runs

    @classmethod
    def from_rule(cls, rule: StopRule) -> RunBudget | None:
        return None if rule.max_runs is None else cls(rule.max_runs)

    def reason(self, progress: Progress) -> str | None:
        if progress.runs >= self.max_runs:
            return run_budget_spent(progress.runs, self.max_runs)
        return None


def run_budget_spent(runs: int, max_runs: int) -> str:
    """Why learning stopped at ``stop.max_runs``."""
    return f"run budget spent ({runs} runs >= max_runs {max_runs})"


class LearningTimeBudget(StopCondition):
    stage = "budget"

    def __init__(self, max_learning_s: float) -> None:
        self.max_learning_s = max_learning_s

    @classmethod
    def from_rule(cls, rule: StopRule) -> LearningTimeBudget | None:
        return None if rule.max_learning_s is None else cls(rule.max_learning_s)

    def reason(self, progress: Progress) -> str | None:
        if progress.learning_s >= self.max_learning_s:
            return (f"learning-time budget spent ({progress.learning_s:.0f} s >= "
                    f"max_learning_s {self.max_learning_s:.0f})")
        return None


class ErrorThreshold(StopCondition):
    """Internal error <= error_pct with at least min_samples training samples. With
    ``confirm_runs`` k, also: the last k training runs, each predicted before it ran, were
    off by <= ``confirm_pct`` (default error_pct) on average. A cross-validated error over
    a dozen samples can be far below the error over the space; runs the model had to
    predict before seeing them cannot flatter it."""

    def __init__(self, error_pct: float, min_samples: int, confirm_runs: int | None = None,
                 confirm_pct: float | None = None) -> None:
        self.error_pct = error_pct
        self.min_samples = min_samples
        self.confirm_runs = confirm_runs
        self.confirm_pct = error_pct if confirm_pct is None else confirm_pct

    @classmethod
    def from_rule(cls, rule: StopRule) -> ErrorThreshold:
        return cls(rule.error_pct, rule.min_samples, rule.confirm_runs, rule.confirm_pct)

    def reason(self, progress: Progress) -> str | None:
        err = progress.internal_error
        if err is None or err > self.error_pct or progress.samples < self.min_samples:
            return None
        reason = (f"internal error {err:.2f}% <= {self.error_pct:g}% "
                  f"with {progress.samples} training samples")
        if self.confirm_runs is None:
            return reason
        recent = list(progress.prospective)[-self.confirm_runs:]
        if len(recent) < self.confirm_runs:
            return None
        ahead = float(np.mean(recent))
        if ahead > self.confirm_pct:
            return None
        return (reason + f"; the last {self.confirm_runs} runs, predicted before they ran, "
                f"were {ahead:.2f}% off on average")


class Patience(StopCondition):
    """The best internal error of the last ``patience`` training runs is no better (by 0.5
    points) than the best before them. With ``stop.honest``: the median of the last 3
    errors is no better than the median of the 3 before the window, and the reason quotes
    the delivered model's current error (not the lowest ever seen) and says when it missed
    the target."""

    stage = "plateau"

    def __init__(self, patience: int, honest: bool = False, target: float = 0.0) -> None:
        self.patience = patience
        self.honest = honest
        self.target = target

    @classmethod
    def from_rule(cls, rule: StopRule) -> Patience | None:
        if rule.patience is None:
            return None
        return cls(rule.patience, rule.honest, rule.error_pct)

    def reason(self, progress: Progress) -> str | None:
        hist, patience = progress.error_history, self.patience
        if self.honest:
            return self._honest_reason(progress)
        if len(hist) <= patience:
            return None
        before, recent = min(hist[:-patience]), min(hist[-patience:])
        if recent > before - PLATEAU_GAIN:
            return (f"internal error plateaued at {min(hist):.2f}% (no 0.5-point gain in "
                    f"{patience} runs)")
        return None


    def _honest_reason(self, progress: Progress) -> str | None:
        hist, patience = list(progress.error_history), self.patience
        if len(hist) < patience + 3 or progress.internal_error is None:
            return None
        before = float(np.median(hist[-patience - 3:-patience]))
        recent = float(np.median(hist[-3:]))
        if recent <= before - PLATEAU_GAIN:
            return None
        return (f"internal error plateaued (no 0.5-point gain in {patience} runs)"
                + unreached(progress.internal_error, self.target))


def unreached(error: float | None, target: float) -> str:
    """'; target ... not reached ...' when the delivered model's error misses the target."""
    if error is None:
        return f"; target {target:g}% not reached: no internal error estimate yet"
    if error > target:
        return (f"; target {target:g}% not reached: the delivered model's internal error "
                f"is {error:.2f}%")
    return f"; the delivered model's internal error is {error:.2f}%"


STOP_CONDITIONS: dict[str, type[StopCondition]] = {
    "max_runs": RunBudget,
    "max_learning_s": LearningTimeBudget,
    "error_pct": ErrorThreshold,
    "patience": Patience,
}


class StopRules:
    """The conditions a design's stop rule enables, checked by stage in registry order."""

    def __init__(self, rule: StopRule) -> None:
        built = (cls.from_rule(rule) for cls in STOP_CONDITIONS.values())
        self.conditions = [c for c in built if c is not None]

    def first(self, stage: str, progress: Progress) -> str | None:
        """The first reason to stop among the conditions of ``stage``, or None."""
        for c in self.conditions:
            if c.stage == stage:
                reason = c.reason(progress)
                if reason:
                    return reason
        return None


class CommitteeAgreement:
    """``stop.agreement_pct``: convergence counts only once alternative predictor fits agree
    over the candidates (mean relative spread of predicted T <= the limit)."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.last: float | None = None  # the latest spread measured, in percent

    def agrees(self, view: PlanView, exploring: bool) -> bool:
        if self.limit is None:
            return True
        if exploring:
            return False
        pool = view.candidate_pool(list(view.held_out), AGREEMENT_POOL)
        if not pool:
            return True
        preds = view.learner.committee(np.asarray(pool, float), plausible_only=True)
        if len(preds) < 2:  # no plausible alternative: agreement is not shown, keep sampling
            self.last = None
            return False
        _, spread = committee_spread(preds)
        self.last = float(np.mean(spread) * 100)
        return self.last <= self.limit
