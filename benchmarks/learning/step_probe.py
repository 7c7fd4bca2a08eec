"""What changes a campaign's model from one run to the next, and what keeping the old part
would have done: a probe (issue 9, item 1: campaigns that reach 10% and lose it again; nothing
here changes a design).

``recommended`` (or ``--design``) runs as usual; after every run the probe notes what the
delivered model changed (a predictor's form, the residual correction switched on or off or
its kernel moved, the blend's weight) and its error over every assignment of the case not
run yet (as ``space.py``). Where it can, it also scores the alternative the learner turned
down, on the same runs:

- a form switch: the previous forms of the switched predictors refitted (``kept``) against
  the new ones (``new``), each with its 5-fold error with the forms held (the residual
  correction gated as the learner gates it), its leave-one-out error and its whole-space
  error;
- the residual correction switching off: the whole-space error with it kept on, and the
  folds' corrected / uncorrected error ratio that switched it off.

The alternatives are scored on a copy of the learner's caches, which are restored, so the
campaign runs as it would without the probe::

    PYTHONPATH=. python -m benchmarks.learning.step_probe run tuning --skip 100 --size 160 \\
        --seeds 6 --out /tmp/steps.json
    PYTHONPATH=. python -m benchmarks.learning.step_probe score /tmp/steps.json
"""

from __future__ import annotations

import contextlib
import copy
import io
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.learning.blend_probe import on_learner
from benchmarks.learning.evaluate import Job, load_case, replay_argv, sizes, split_case
from benchmarks.learning.probe_cli import probe_main
from benchmarks.learning.space import whole_space
from nimo.metrics import mape_pct

CACHES = ("_loo_cache", "_loo_raw", "_cv_cache", "_fixed_cache", "_hyper", "_field",
          "_blend", "use_residual", "fitted")
MOVED = 0.7  # a kernel moved: a log length scale or the log signal changed by more than this
FIRST_STEP = 6  # steps before this run count are not classified (the start is all change)


class Probe:
    """Per-step records of one campaign (``steps``) scored on ``X``, ``T`` (every assignment
    of the case, mean T)."""

    def __init__(self, X: np.ndarray, T: np.ndarray) -> None:
        self.X, self.T = X, T
        self.steps: list[dict[str, Any]] = []
        self.previous: dict[str, Any] | None = None

    def grab(self, learner: Any) -> None:
        state = signature(learner)
        step: dict[str, Any] = {"n": learner.n, "space": self.space_error(learner)}
        before = self.previous
        if before is not None and before["n"] < learner.n:
            step["change"] = change_of(before, state)
            with preserved(learner):
                step.update(self.alternatives(learner, before, state))
        self.steps.append(step)
        self.previous = {**state, "n": learner.n, "fitted": dict(learner.fitted)}

    def alternatives(self, learner: Any, before: dict[str, Any], state: dict[str, Any]
                     ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        switched = [p for p in state["forms"] if state["forms"][p] != before["forms"].get(p)]
        kept = kept_forms(learner, before["fitted"], switched) if switched else None
        if kept is not None:
            out["switch"] = {"new": self.figures(learner, dict(learner.fitted)),
                             "kept": self.figures(learner, kept), "predictors": switched}
        if before["residual"] is not None and state["residual"] is None:
            out["residual_off"] = self.residual_kept(learner)
        return out

    def space_error(self, learner: Any) -> float | None:
        """The MAPE over every assignment not run yet (None: every one ran)."""
        ran = {tuple(r) for r in learner.X.tolist()}
        rest = np.array([tuple(r) not in ran for r in self.X.tolist()])
        return mape_pct(self.T[rest], learner.model().predict_many(self.X[rest]))

    def figures(self, learner: Any, fitted: dict[str, Any]) -> dict[str, float | None]:
        """The model with ``fitted``: fold error with its forms held (correction gated as
        the learner gates it), leave-one-out error of T, whole-space error."""
        from nimo.planner.learner import RESIDUAL_GAIN

        learner.fitted = fitted
        forget(learner)
        plain, corrected = fold_errors(learner, fixed_form=True)
        held = plain
        if learner._residual_hyper() is not None and plain is not None and (
                corrected is not None and corrected < RESIDUAL_GAIN * plain):
            held = corrected
        forget(learner)
        learner.cv_errors()
        return {"held_forms": held, "loo": learner.loo_errors()[0],
                "space": self.space_error(learner)}

    def residual_kept(self, learner: Any) -> dict[str, float | None]:
        """The whole-space error as delivered (off) and with the correction kept on."""
        plain, corrected = fold_errors(learner)
        off = self.space_error(learner)
        learner.use_residual, learner._field = True, None
        on = self.space_error(learner)
        ratio = corrected / plain if plain and corrected is not None else None
        return {"off": off, "on": on, "ratio": ratio}


def fold_errors(learner: Any, fixed_form: bool = False) -> tuple[float | None, float | None]:
    """The learner's 5-fold error of T without and with the residual correction (forms
    selected in every fold, or ``fixed_form``: the delivered forms refitted)."""
    from nimo.model.support import clip_to_bounds
    from nimo.planner.crossval import error_of

    cv = learner.folds(learner.n, fixed_form=fixed_form)
    T, bounds = learner.T(), learner.bounds()
    return (error_of(T, clip_to_bounds(cv.predicted, bounds)),
            error_of(T, clip_to_bounds(cv.predicted * cv.factor, bounds)))


def signature(learner: Any) -> dict[str, Any]:
    """What a step can change: each predictor's form, the correction's kernel (None: off;
    log length scales and log signal), the blend's weight."""
    forms = {p: [f.response, [t.label for t in f.terms]] for p, f in learner.fitted.items()}
    field = learner.residual_field()
    kernel = None if field is None else [
        np.log(field.hyper.lengthscales).tolist(), float(np.log(field.hyper.signal))]
    return {"forms": forms, "residual": kernel, "blend": round(float(learner._blend.weight), 3)}


def change_of(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The step's class: what changed between signatures ``a`` and ``b`` ('refit': none)."""
    parts = ["form"] if a["forms"] != b["forms"] else []
    ra, rb = a["residual"], b["residual"]
    if (ra is None) != (rb is None):
        parts.append("residual on" if rb is not None else "residual off")
    elif ra is not None and (
            np.max(np.abs(np.subtract(ra[0], rb[0]))) > MOVED or abs(ra[1] - rb[1]) > MOVED):
        parts.append("kernel")
    if a["blend"] != b["blend"]:
        parts.append("blend")
    return " + ".join(parts) or "refit"


def kept_forms(learner: Any, before: dict[str, Any], switched: Sequence[str]
               ) -> dict[str, Any] | None:
    """The fitted predictors with the ``switched`` ones' previous forms refitted on every
    run; None where a previous form no longer applies."""
    fitted = dict(learner.fitted)
    for p in switched:
        old = before.get(p)
        if old is None or not set(old.attributes) <= set(learner.active[p]):
            return None
        try:
            fitted[p] = learner.fit_on(p, learner.X, learner.y(p), learner.options,
                                       structure=(old.response, old.terms))
        except (ValueError, np.linalg.LinAlgError):
            return None
    return fitted


def forget(learner: Any) -> None:
    """Every cache a refit or a new kernel would renew (as ``Learner.refit`` does)."""
    learner._loo_cache = learner._loo_raw = learner._field = None
    learner._cv_cache = learner._fixed_cache = learner._hyper = None
    learner._blend.forget()


@contextlib.contextmanager
def preserved(learner: Any) -> Iterator[None]:
    """The learner's fits and caches as they were, after whatever the block does."""
    saved = {k: copy.copy(getattr(learner, k)) for k in CACHES}
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(learner, k, v)


_ACTIVE: dict[str, Probe] = {}


def _grab(learner: Any) -> None:
    probe = _ACTIVE.get("probe")
    if probe is not None and learner.n >= 2:
        probe.grab(learner)


def probe(args: tuple[Any, int, str]) -> dict[str, Any]:
    """One campaign of ``design`` with the probe; its per-step records."""
    from workbench.cli import main

    on_learner("_step_probe", _grab)
    case, seed, design = args
    judge, external = sizes(case, None, None)
    job = Job(case, design, seed, judge, external)
    with tempfile.TemporaryDirectory(prefix="nimo-steps-") as d:
        train, judge_rows = split_case(job, Path(d))
        X, T, _ = whole_space(load_case(train, job), judge_rows, case.attributes)
        _ACTIVE["probe"] = Probe(X, T)
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            main(replay_argv(job, train, Path(d) / "run.json"))
    return {"case": case.name, "seed": seed, "steps": _ACTIVE.pop("probe").steps}


def score(records: Sequence[dict[str, Any]]) -> list[str]:
    """The printed summary: steps by what changed, and both alternatives' tallies."""
    steps = [s for r in records for s in r["steps"]
             if "change" in s and s["n"] >= FIRST_STEP and s["space"] is not None]
    lines = [f"{len(records)} campaigns, {len(steps)} steps from run {FIRST_STEP}",
             f"{'what changed':28s} {'steps':>6s} {'rose':>5s} {'fell':>5s} "
             f"{'up past 10%':>12s} {'down under':>11s}"]
    tally: dict[str, Counter[str]] = {}
    previous = {id(s): p for r in records for p, s in pairwise(r["steps"])}
    for s in steps:
        a, b = previous[id(s)]["space"], s["space"]
        if a is None:
            continue
        c = tally.setdefault(s["change"], Counter())
        c.update(steps=1, rose=b > 1.3 * a and b > a + 2, fell=b < a / 1.3 and b < a - 2,
                 up=a <= 10 < b, down=b <= 10 < a)
    for name, c in sorted(tally.items(), key=lambda kv: -kv[1]["steps"]):
        lines.append(f"{name:28s} {c['steps']:6d} {c['rose']:5d} {c['fell']:5d} "
                     f"{c['up']:12d} {c['down']:11d}")
    return lines + switch_lines(steps) + residual_lines(steps)


def _tally(chosen: np.ndarray, other: np.ndarray) -> str:
    return (f"better by > 1 point {int(np.sum(chosen < other - 1))}, worse "
            f"{int(np.sum(chosen > other + 1))}; under 10% only so "
            f"{int(np.sum((chosen <= 10) & (other > 10)))}, over only so "
            f"{int(np.sum((chosen > 10) & (other <= 10)))}; sum log(chosen / other) "
            f"{float(np.sum(np.log(chosen / other))):+.2f}")


def switch_lines(steps: Sequence[dict[str, Any]]) -> list[str]:
    """Form switches: the new forms against the kept ones, and rules that would veto."""
    ev = [s["switch"] for s in steps if "switch" in s
          and None not in (*s["switch"]["new"].values(), *s["switch"]["kept"].values())]
    if not ev:
        return ["form switches: none scored"]
    new = np.array([e["new"]["space"] for e in ev])
    kept = np.array([e["kept"]["space"] for e in ev])
    lines = [f"form switches ({len(ev)}): the new forms against the kept: {_tally(new, kept)}"]
    for key in ("held_forms", "loo"):
        for margin in (0.0, 0.1):
            switch = np.array([e["new"][key] < (1 - margin) * e["kept"][key] for e in ev])
            chosen = np.where(switch, new, kept)
            lines.append(f"  switch only where {key} is {margin:.0%} lower "
                         f"({int(switch.sum())} switch): {_tally(chosen, new)} against always")
    return lines


def residual_lines(steps: Sequence[dict[str, Any]]) -> list[str]:
    """The correction switching off: kept on instead, by the folds' ratio that switched it."""
    ev = [s["residual_off"] for s in steps if "residual_off" in s
          and None not in s["residual_off"].values()]
    if not ev:
        return ["residual correction off: none scored"]
    on, off = (np.array([e[k] for e in ev]) for k in ("on", "off"))
    ratio = np.array([e["ratio"] for e in ev])
    lines = [f"residual correction off ({len(ev)}): kept on instead: {_tally(on, off)}"]
    for lo, hi in ((0.8, 0.9), (0.9, 1.0), (1.0, np.inf)):
        m = (ratio >= lo) & (ratio < hi)
        if m.any():
            lines.append(f"  folds' ratio {lo:.1f}-{hi:.1f} ({int(m.sum())}): "
                         f"{_tally(on[m], off[m])}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return probe_main("step_probe", probe, score, argv, design=True)


if __name__ == "__main__":
    raise SystemExit(main())
