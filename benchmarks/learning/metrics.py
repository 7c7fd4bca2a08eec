"""The learning benchmark's marks and metric functions (pure; see evaluate.py)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

TARGET_PCT = 10.0
BUDGET_FRACTION = 0.02
TIME_FRACTIONS = (0.0025, 0.005, 0.01, 0.02, 0.05, 0.10)
CONFIG_FRACTIONS = (0.10, 0.20, 0.30)
LEVEL = 0.90
GBR = "gradient-boosting"
RANDOM = "baseline-random"
SMALL_APP = 500  # assignments: below, 2% of the all-samples time is only a few runs
COVERAGE_ROWS = 300  # assignments not run whose every repeat judges the delivered interval

Point = tuple[int, float, float | None]  # (run, acquisition_s, external MAPE %)


# --------------------------------------------------------------------------- metric functions

def _ok(e: float | None, target: float) -> bool:
    return e is not None and math.isfinite(e) and e <= target


def reach_and_keep(points: Sequence[Point], target: float = TARGET_PCT,
                   final: float | None = None) -> tuple[int, float] | None:
    """(run, acquisition_s) of the first iteration from which external MAPE stays <= target
    for every later iteration and for the final model; None if it never does."""
    if final is not None and not _ok(final, target):
        return None
    hit: tuple[int, float] | None = None
    for run, acq, e in points:
        if _ok(e, target):
            if hit is None:
                hit = (run, acq)
        else:
            hit = None
    return hit


def reached_within(hit: tuple[int, float] | None, all_samples_s: float,
                   fraction: float = BUDGET_FRACTION) -> bool:
    return hit is not None and hit[1] <= fraction * all_samples_s


def mape_at_budget(points: Sequence[Point], budget_s: float,
                   final: float | None) -> float | None:
    """External MAPE of the model held when ``budget_s`` of learning time is spent: the last
    iteration within the budget; the delivered (final) model if the campaign ended within it;
    None if not even one run fits the budget."""
    within = [p for p in points if p[1] <= budget_s]
    if not within:
        return None
    if len(within) == len(points):
        return final if final is not None else within[-1][2]
    return within[-1][2]


def mape_after_runs(points: Sequence[Point], runs: int,
                    final: float | None) -> tuple[float | None, bool]:
    """(external MAPE after ``runs`` runs, whether the campaign had stopped before)."""
    if not points:
        return final, True
    if points[-1][0] < runs:
        return (final if final is not None else points[-1][2]), True
    last = [p for p in points if p[0] <= runs]
    return (last[-1][2] if last else None), False


def honesty_ratio(internal: Sequence[float | None], external_final: float | None) -> float | None:
    """External MAPE at stop / the last internal error reported (None when either is missing)."""
    vals = [v for v in internal if v is not None and math.isfinite(v)]
    if not vals or external_final is None or not math.isfinite(external_final):
        return None
    if vals[-1] <= 0:
        return math.inf
    return external_final / vals[-1]


def interval_hits(intervals: Iterable[tuple[float, float]], measured: Iterable[float]
                  ) -> tuple[int, int, int]:
    """(inside, total, NaN intervals) of measured values against (lo, hi) intervals."""
    inside = total = nan = 0
    for (lo, hi), T in zip(intervals, measured, strict=True):
        total += 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            nan += 1
        elif lo <= T <= hi:
            inside += 1
    return inside, total, nan


def median_inf(values: Iterable[float | None]) -> float:
    """Median where None (never reached / no model) counts as +infinity; NaN when empty."""
    v = [math.inf if x is None else float(x) for x in values]
    if not v:
        return math.nan
    v.sort()
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else math.nan
