"""Internal-error estimates scored offline on never-stopping campaigns (issue 9, item 3).

Like :mod:`benchmarks.learning.stop_study`, but after every run the study hook also records,
for three fold seeds, the 5-fold error of T and each fold model's error over all the runs,
and the delivered model's error over its own runs. ``score`` then replays the stop rule of
``recommended`` reading each estimate as the internal error:

- ``cv``: the shipped 5-fold error (the first fold seed is the planner's own);
- ``mean-3`` / ``median-3``: over three fold seeds (repeated cross-validation);
- ``burman-1`` / ``burman-3``: Burman's corrected k-fold error (Biometrika 1989): the k-fold
  error plus the delivered model's apparent error minus the fold models' mean error over all
  the runs, which removes the pessimism of training on (k-1)/k of the runs::

    PYTHONPATH=. python -m benchmarks.learning.estimate_study run tuning --apps 60 \\
        --seeds 3,4 --out /tmp/est.json
    PYTHONPATH=. python -m benchmarks.learning.estimate_study score /tmp/est.json

The planner is unchanged: the hook fits new fold models and reads the learner; the only
caches it fills (the residual kernel and field) are ones the planner fills with the same
values at the same sample count.
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks.learning import stop_study
from benchmarks.learning.evaluate import Job

# fold seeds per iteration (the *-3 estimates read three); NIMO_STUDY_FOLD_SEEDS=1 for a faster run
FOLD_SEEDS = int(os.environ.get("NIMO_STUDY_FOLD_SEEDS", "3"))
Estimate = Callable[[dict[str, Any]], float | None]


def _ape(T: np.ndarray, predicted: np.ndarray) -> float | None:
    from nimo.planner.crossval import error_of

    return error_of(T, predicted)


def _folds_of_seed(learner: Any, seed: int, folds: int = 5,
                   runs: bool = False) -> dict[str, Any]:
    """5-fold error of T for one fold seed, and the fold models' mean error over all runs
    (the residual correction applied as the planner applies it); ``runs``: also each run's
    out-of-fold error (:func:`_run_errors`)."""
    from nimo.model.support import clip_to_bounds

    cv, T, bounds = learner.folds(seed, folds), learner.T(), learner.bounds()
    out_of_fold, fold_T = cv.predicted, cv.fold_T
    if learner.use_residual:
        out_of_fold = clip_to_bounds(out_of_fold * cv.factor, bounds)
        fold_T = clip_to_bounds(fold_T * cv.fold_factor, bounds)
    known = [e for e in (_ape(T, row) for row in fold_T) if e is not None]
    out: dict[str, Any] = {"cv": _ape(T, out_of_fold),
                           "all": float(np.mean(known)) if known else None}
    if runs:
        out["runs"] = _run_errors(T, out_of_fold)
    return out


def _fixed_form_folds(learner: Any, seed: int, folds: int = 5) -> dict[str, Any]:
    """Like :func:`_folds_of_seed`, but each fold refits the delivered model's form
    (``Learner.folds(fixed_form=True)``) instead of selecting one."""
    from nimo.model.support import clip_to_bounds

    cv, T = learner.folds(seed, folds, fixed_form=True), learner.T()
    out_of_fold = cv.predicted
    if learner.use_residual:
        out_of_fold = clip_to_bounds(out_of_fold * cv.factor, learner.bounds())
    return {"cv": _ape(T, out_of_fold), "runs": _run_errors(T, out_of_fold)}


def _apparent(learner: Any) -> float | None:
    """The delivered model's error over its own training runs."""
    return _ape(learner.T(), learner.apparent_T())


def _run_errors(T: np.ndarray, predicted: np.ndarray) -> list[float | None]:
    """Each run's out-of-fold error (%), floored and capped as the planner's figure
    (:func:`nimo.planner.crossval.error_of`) counts it."""
    from nimo.metrics import internal_apes
    from nimo.planner.crossval import RUN_ERROR_CAP_PCT

    ape = internal_apes(T, predicted, cap_pct=RUN_ERROR_CAP_PCT)
    return [None if not np.isfinite(e) else float(e) for e in ape]


def nearest_run_weights(learner: Any, most: int = 2000) -> list[float]:
    """Each run's share of the candidate assignments nearest to it (rank-scaled distance;
    runs of one assignment share its cell): the weight a run's error has in an error over
    the candidate space."""
    from scipy.spatial.distance import cdist

    from nimo.planner.strategies.scoring import rank_scale

    space = learner.space
    cands = np.asarray(space.candidates, float)
    if len(cands) > most:
        cands = cands[np.random.default_rng(len(cands)).choice(len(cands), most, False)]
    X = learner.X
    unique, group = np.unique(X, axis=0, return_inverse=True)
    nearest = cdist(rank_scale(space, cands), rank_scale(space, unique)).argmin(axis=1)
    cell = np.bincount(nearest, minlength=len(unique)).astype(float)
    size = np.bincount(group.reshape(-1), minlength=len(unique))
    return [float(cell[g] / size[g] / len(cands)) for g in group.reshape(-1)]


def estimates(learner: Any) -> dict[str, Any]:
    """The figures the estimates are built from; {} before every predictor is fitted."""
    if learner.n < 6 or set(learner.fitted) != set(learner.predictor_names):
        return {}
    seeds = [_folds_of_seed(learner, learner.n + 7919 * k, runs=k == 0)
             for k in range(FOLD_SEEDS)]
    return {"seeds": seeds, "apparent": _apparent(learner), "runs": seeds[0].pop("runs"),
            "weights": nearest_run_weights(learner),
            "fixed": _fixed_form_folds(learner, learner.n)}


def _hook_estimates() -> None:
    """Add ``est`` (:func:`estimates`) to every iteration record (study only; once)."""
    from nimo.planner.common import BasePlanner

    original = BasePlanner._record
    if getattr(original, "estimate_hook", False):
        return

    def record(self: Any, req: Any, outcome: Any, **extra: object) -> Any:
        extra.update(est=estimates(self.learner))
        return original(self, req, outcome, **extra)

    record.estimate_hook = True  # type: ignore[attr-defined]
    BasePlanner._record = record  # type: ignore[method-assign]


def record_trajectory(job: Job) -> dict[str, Any]:
    _hook_estimates()
    return stop_study.trajectory(job, extra_keys=("est",))


# ------------------------------------------------------------------------------ scoring

def _parts(it: dict[str, Any]) -> tuple[list[float], list[float], float] | None:
    est = it.get("est") or {}
    seeds, apparent = est.get("seeds") or [], est.get("apparent")
    cvs, alls = [s["cv"] for s in seeds], [s["all"] for s in seeds]
    if not seeds or apparent is None or None in cvs or None in alls:
        return None
    return cvs, alls, apparent


def _burman(k: int) -> Estimate:
    def estimate(it: dict[str, Any]) -> float | None:
        parts = _parts(it)
        if parts is None:
            return it["internal_error_pct"]
        cvs, alls, apparent = parts
        return max(float(np.mean([c + apparent - a for c, a in
                                  zip(cvs[:k], alls[:k], strict=True)])), 0.0)
    return estimate


def _over_seeds(how: Callable[[list[float]], float]) -> Estimate:
    def estimate(it: dict[str, Any]) -> float | None:
        parts = _parts(it)
        return it["internal_error_pct"] if parts is None else how(parts[0])
    return estimate


def _nearest_weighted(blend: float, fixed: bool = False) -> Estimate:
    """The runs' out-of-fold errors weighted by their share of the candidate space
    (``blend`` 1) or half that and half evenly (0.5); ``fixed``: the fixed-form folds'."""
    def estimate(it: dict[str, Any]) -> float | None:
        est = it.get("est") or {}
        runs = ((est.get("fixed") or {}).get("runs") if fixed else est.get("runs"))
        weights = est.get("weights")
        if not runs or not weights:
            return it["internal_error_pct"]
        e, w = np.asarray(runs, float), np.asarray(weights, float)  # None -> NaN
        ok = np.isfinite(e)
        if not ok.any():
            return it["internal_error_pct"]
        w = blend * w[ok] / w[ok].sum() + (1 - blend) / ok.sum()
        return float(np.sum(w * e[ok]))
    return estimate


def _geometric(a: float, b: float) -> float:
    """The geometric mean of two errors, as ``cv_form`` blends its two."""
    return float(np.sqrt(max(a, 0.0) * max(b, 0.0)))


def _nearest_form(it: dict[str, Any]) -> float | None:
    """:func:`_geometric` of the nearest-weighted re-selecting and fixed-form fold errors
    (``cv_form`` with each run weighted by its share of the candidate space)."""
    a, b = _nearest_weighted(1.0)(it), _nearest_weighted(1.0, fixed=True)(it)
    return a if a is None or b is None else _geometric(a, b)


def _with_burman(it: dict[str, Any], value: float | None) -> float | None:
    """``value`` Burman-corrected with the planner's fold seed (floored at the apparent)."""
    parts = _parts(it)
    if parts is None or value is None:
        return value
    _, alls, apparent = parts
    return max(value + apparent - alls[0], apparent)


def _fixed(how: Callable[[float, float], float]) -> Estimate:
    """The fixed-form k-fold error (``how(cv, fixed)``: alone or combined with the cv)."""
    def estimate(it: dict[str, Any]) -> float | None:
        fixed = ((it.get("est") or {}).get("fixed") or {}).get("cv")
        cv = it["internal_error_pct"]
        return cv if fixed is None or cv is None else how(cv, fixed)
    return estimate


ESTIMATES: dict[str, Estimate] = {
    "cv": lambda it: it["internal_error_pct"],
    "nearest": _nearest_weighted(1.0),
    "nearest-half": _nearest_weighted(0.5),
    "nearest-burman": lambda it: _with_burman(it, _nearest_weighted(1.0)(it)),
    "nearest-form": _nearest_form,
    "mean-3": _over_seeds(lambda v: float(np.mean(v))),
    "median-3": _over_seeds(lambda v: float(np.median(v))),
    "burman-1": _burman(1),
    "burman-3": _burman(3),
    "fixed": _fixed(lambda cv, fixed: fixed),
    "fixed-geo": _fixed(_geometric),
    "fixed-mean": _fixed(lambda cv, fixed: (cv + fixed) / 2),
}


def _along(trajs: Sequence[dict[str, Any]], estimate: Estimate, run: int) -> str:
    """ext/int median and sd of its log over every campaign at ``run`` runs."""
    logs = []
    for t in trajs:
        if len(t["iterations"]) >= run:
            it = t["iterations"][run - 1]
            value = estimate(it)
            if value:
                logs.append(np.log(it["external_mape_pct"] / value))
    return f"{np.exp(np.median(logs)):.2f} (sd log {np.std(logs):.2f})" if logs else "-"


def score_all(trajs: Sequence[dict[str, Any]]) -> None:
    done = [t for t in trajs if t["exit"] == 0]
    for name, estimate in ESTIMATES.items():
        scored = [stop_study.score_values(t, [estimate(it) for it in t["iterations"]], 10)
                  for t in done]
        r = np.array([s["ratio"] for s in scored if s["ratio"] is not None])
        reached = 100 * np.mean([s["reached"] for s in scored])
        print(f"{name:9s} at stop: reach & keep {reached:5.1f}%,"
              f" stop {statistics.median(s['stop_run'] for s in scored):4.1f}, final "
              f"{statistics.median(s['final'] for s in scored):5.2f}%, ext/int "
              f"{np.median(r):.2f} (sd log {np.std(np.log(r)):.2f}; > 2: "
              f"{100 * np.mean(r > 2):4.1f}%, < 0.5: {100 * np.mean(r < 0.5):4.1f}%)")
        print(f"{'':9s} along: at 20 runs {_along(done, estimate, 20)}, at 30 runs "
              f"{_along(done, estimate, 30)}")


if __name__ == "__main__":
    sys.exit(stop_study.main(record=record_trajectory, score_all=score_all,
                             description=__doc__.splitlines()[0]))
