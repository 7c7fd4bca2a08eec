"""The measurement noise in the internal error, scored offline on never-stopping campaigns.

A replayed run returns one of an assignment's repeated measurements, while the external test
set scores the model against their mean; the cross-validated error compares each held-out
run with its single measurement, so it carries that run's noise where the external error
carries less (tuning suite: ext/int at stop 0.92 with one measurement per assignment, 0.68-0.80
with 2-5). Like :mod:`benchmarks.learning.stop_study`, but after every run the hook also
records, read-only from the learner's caches (nothing is computed that the planner would not
compute itself), the kernels' noise variances: of the residual correction's kernel on the
log-residuals and of the Gaussian process on log T, and the two cross-validated errors that
``cv_form`` combines. ``score`` replays the stop rule of ``recommended`` with the internal
error less the noise a single measurement adds (``sqrt(e^2 - (100 sqrt(2/pi) sigma)^2)``, at
least ``e / 2``)::

    PYTHONPATH=. python -m benchmarks.learning.noise_study run tuning --apps 60 \\
        --seeds 1,2 --max-runs 150 --out /tmp/noise.json
    PYTHONPATH=. python -m benchmarks.learning.noise_study score /tmp/noise.json
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.learning import stop_study
from benchmarks.learning.evaluate import Job

NOISE_KEYS = ("noise_resid", "noise_logt")  # the kernels' noise estimates an iteration carries
EXTRA = (*NOISE_KEYS, "cv_plain", "cv_fixed")
HALF_NORMAL = math.sqrt(2.0 / math.pi)  # E|z| of a standard normal z
Values = Callable[[dict[str, Any]], float | None]


def _cached(cache: Any, n: int) -> Any:
    """The value of a learner cache ``(sample count, value)`` if computed at ``n``."""
    return cache[1] if cache is not None and cache[0] == n else None


def noise_figures(learner: Any) -> dict[str, float | None]:
    """The kernels' noise variances and the two fold errors, as cached at this sample count."""
    n = learner.n
    resid, logt = (c[1] if c is not None else None  # the latest, at whichever count
                   for c in (learner._hyper, learner._blend._hyper))
    plain = _cached(learner._cv_cache, n)
    return {"noise_resid": resid.noise if resid is not None else None,
            "noise_logt": logt.noise if logt is not None else None,
            "cv_plain": plain[0] if plain is not None else None,
            "cv_fixed": _cached(learner._fixed_cache, n)}


def _hook() -> None:
    from nimo.planner.common import BasePlanner

    stop_study._hook_prospective()
    original = BasePlanner._record
    if getattr(original, "noise_hook", False):
        return

    def record(self: Any, req: Any, outcome: Any, **extra: object) -> Any:
        extra.update(noise_figures(self.learner))
        return original(self, req, outcome, **extra)

    record.noise_hook = True  # type: ignore[attr-defined]
    BasePlanner._record = record  # type: ignore[method-assign]


def record_trajectory(job: Job) -> dict[str, Any]:
    _hook()
    return stop_study.trajectory(job, EXTRA)


def deducted(key: str) -> Values:
    """The internal error less the noise of one measurement, by the kernel ``key``'s noise
    variance (the last one known), at least half the internal error."""
    def values(it: dict[str, Any]) -> float | None:
        e = it["internal_error_pct"]
        var = it.get("_" + key)
        if e is None or var is None:
            return e
        noise = 100.0 * HALF_NORMAL * math.sqrt(max(var, 0.0))
        return max(math.sqrt(max(e * e - noise * noise, 0.0)), e / 2.0)
    return values


def _carry(its: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``its`` with ``_KEY``: the last known value of each noise key so far
    (caches refresh sparsely)."""
    last: dict[str, float | None] = {}
    out = []
    for it in its:
        for key in NOISE_KEYS:
            if it.get(key) is not None:
                last[key] = it[key]
        out.append({**it, **{"_" + key: last.get(key) for key in NOISE_KEYS}})
    return out


def summary(trajs: Sequence[dict[str, Any]], name: str, values: Values,
            patience: int = 30) -> str:
    scored = []
    for t in trajs:
        if t["exit"] != 0:
            continue
        its = _carry(t["iterations"])
        prospective = stop_study._prospective_so_far(its)
        vals = [values(it) for it in its]
        stop = stop_study.stop_index(its, vals, prospective, 10, patience=patience)
        scored.append(stop_study.score_at(t, vals, stop))
    return f"{name:22s} patience {patience:3d}: {stop_study.scored_figures(scored)}"


def score_all(trajs: Sequence[dict[str, Any]]) -> None:
    def shipped(it: dict[str, Any]) -> float | None:
        return it["internal_error_pct"]

    for patience in (30, 45, 60):
        print(summary(trajs, "cv_form (shipped)", shipped, patience))
    for key in NOISE_KEYS:
        print(summary(trajs, f"less {key}", deducted(key)))


if __name__ == "__main__":
    sys.exit(stop_study.main(record=record_trajectory, score_all=score_all,
                             description=__doc__.splitlines()[0]))
