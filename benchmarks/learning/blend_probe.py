"""A Gaussian process on log T, alone and blended with the delivered model: a probe (issue 9,
item 4; nothing here is in ``recommended``).

For each case and seed, ``recommended`` runs without stopping; when the learner holds N runs
(``--marks``: fractions of the configurations, or run counts when above 1) the hook takes its
runs, its 5-fold out-of-fold predictions of T and its model. Every GP variant is fitted on the
same folds; the blend ``T = P^(1-w) G^w`` takes the ``w`` in 0, 0.25, ..., 1 of lowest 5-fold
error. Per variant it records the external MAPE over every assignment (the mean T of each) of
G alone and of the blend, and the blend's fold error::

    PYTHONPATH=. python -m benchmarks.learning.blend_probe run tuning-small --marks 0.2,0.3 \\
        --seeds 1 --out /tmp/blend.jsonl
    PYTHONPATH=. python -m benchmarks.learning.blend_probe score /tmp/blend.jsonl

Categorical attributes are read by their codes, as numbers (as the residual kernel reads
them); a case whose CSV holds other values is not for this probe. Variants: a Matern 5/2 or
squared-exponential kernel (scikit-learn, a length scale per attribute, white noise, mean
log T as the prior mean) on attributes scaled to [0, 1] by their logarithm (``m52-log``,
``se-log``) or by rank (``m52-rank``), and this project's residual kernel with a constant
mean (``nimo-rank``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.learning.evaluate import Job, design_arg, read_case, replay_argv, sizes, split_case
from benchmarks.learning.stop_study import NEVER_STOP
from benchmarks.learning.suites import Case, load_suite

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
MIN_RUNS = 5  # a mark below this probes at 5 runs (five folds of one run)
Predict = Callable[[np.ndarray], np.ndarray]
Fit = Callable[[np.ndarray, np.ndarray], Predict]
GRAB: dict[str, Any] = {}


def on_learner(tag: str, grab: Callable[[Any], None]) -> None:
    """Call ``grab(learner)`` whenever a planner records an iteration and every predictor
    is fitted (installed once per process and ``tag``)."""
    from nimo.planner.common import BasePlanner

    original = BasePlanner._record
    if getattr(original, tag, False):
        return

    def record(self: Any, req: Any, outcome: Any, **extra: Any) -> Any:
        if set(self.learner.fitted) == set(self.learner.predictor_names):
            grab(self.learner)
        return original(self, req, outcome, **extra)

    setattr(record, tag, True)
    BasePlanner._record = record  # type: ignore[method-assign]


def parametric_out_of_fold(learner: Any) -> np.ndarray:
    """The delivered model's 5-fold out-of-fold T without the process (with the residual
    correction while used), held within the model's bounds, as the blend's folds see it."""
    from nimo.model.support import clip_to_bounds

    learner.cv_errors()
    cv = learner.folds(learner.n)
    oof = cv.predicted * (cv.factor if learner.use_residual else 1.0)
    return clip_to_bounds(oof, learner.bounds())


def _install_hook() -> None:
    """Keep the learner's runs, out-of-fold T and model when it first holds
    ``GRAB["target"]`` runs."""
    from nimo.planner.crossval import fold_ids

    def grab(learner: Any) -> None:
        if learner.n == GRAB.get("target") and "X" not in GRAB:
            oof = parametric_out_of_fold(learner)
            GRAB.update(X=learner.X.copy(), T=learner.T().copy(), model=learner.model(),
                        oof=oof, ids=fold_ids(learner.n, 5, learner.n))

    on_learner("blend_probe", grab)


def run_quietly(case: Case, seed: int, runs: int, design_name: str = "recommended") -> None:
    """``design_name`` on ``case`` without stopping, up to ``runs`` runs (quietly)."""
    from workbench.cli import main

    with tempfile.TemporaryDirectory(prefix="nimo-blend-") as d:
        tmp = Path(d)
        design = tmp / "design.yaml"
        design.write_text(NEVER_STOP % (design_arg(design_name), runs))
        judge, external = sizes(case, None, None)
        job = Job(case, str(design), seed, judge, external)
        train, _ = split_case(job, tmp)
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            main(replay_argv(job, train, tmp / "run.json"))


def _table(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """Every assignment of the case and its mean T."""
    _, rows = read_case(case.csv, case.attributes)
    groups: dict[tuple[float, ...], list[float]] = defaultdict(list)
    for r in rows:
        groups[tuple(float(r[a]) for a in case.attributes)].append(float(r["T"]))
    return np.array(list(groups)), np.array([np.mean(v) for v in groups.values()])


def _log_scaler(levels: Sequence[Sequence[float]]) -> Callable[[np.ndarray], np.ndarray]:
    """Each attribute to [0, 1] over its levels, by logarithm when they are all positive."""
    def scale(X: np.ndarray) -> np.ndarray:
        out = np.empty_like(X, dtype=float)
        for j, lv in enumerate(levels):
            lo, hi = min(lv), max(lv)
            if lo > 0 and hi > lo:
                out[:, j] = np.log(X[:, j] / lo) / math.log(hi / lo)
            else:
                out[:, j] = (X[:, j] - lo) / ((hi - lo) or 1.0)
        return out
    return scale


def _sklearn_gp(kernel: str, scale: Callable[[np.ndarray], np.ndarray]) -> Fit:
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel

    def fit(X: np.ndarray, logT: np.ndarray) -> Predict:
        start = np.full(X.shape[1], 0.5)
        shape = (Matern(start, (0.02, 100.0), nu=2.5) if kernel == "m52"
                 else RBF(start, (0.02, 100.0)))
        k = ConstantKernel(1.0) * shape + WhiteKernel(1e-3, (1e-6, 1.0))
        mean = float(logT.mean())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gp = GaussianProcessRegressor(k, n_restarts_optimizer=2, random_state=0)
            gp.fit(scale(X), logT - mean)
        return lambda Z: np.exp(gp.predict(scale(Z)) + mean)
    return fit


def _nimo_gp(levels: Sequence[Sequence[float]]) -> Fit:
    from nimo.predictors.residual import fit_field

    def fit(X: np.ndarray, logT: np.ndarray) -> Predict:
        c = float(np.exp(logT.mean()))
        field = fit_field(levels, X, np.exp(logT), np.full(logT.size, c))
        if field is None:
            return lambda Z: np.full(len(Z), c)
        return lambda Z: c * field.factor(Z)
    return fit


def _variants(levels: Sequence[Sequence[float]]) -> dict[str, Fit]:
    from nimo.model.support import rank_scaled

    def by_rank(Z: np.ndarray) -> np.ndarray:
        return rank_scaled(levels, Z)

    log = _log_scaler(levels)
    return {"m52-log": _sklearn_gp("m52", log), "se-log": _sklearn_gp("se", log),
            "m52-rank": _sklearn_gp("m52", by_rank), "nimo-rank": _nimo_gp(levels)}


def _mape(predicted: np.ndarray, T: np.ndarray) -> float:
    return float(np.mean(np.abs(predicted - T) / T) * 100)


def _variant_row(fit: Fit, X: np.ndarray, T: np.ndarray, P: np.ndarray) -> dict[str, float]:
    """G alone and the fold-chosen blend for one variant, on the grabbed runs."""
    from nimo.planner.crossval import error_of

    Xtr, Ttr, oof_p, ids = GRAB["X"], GRAB["T"], GRAB["oof"], GRAB["ids"]
    oof_g = np.full(Ttr.size, np.nan)
    for k in range(5):
        held = ids == k
        if not held.any():
            continue
        oof_g[held] = fit(Xtr[~held], np.log(Ttr[~held]))(Xtr[held])
    fold = {w: error_of(Ttr, oof_p ** (1 - w) * oof_g ** w) for w in WEIGHTS}
    chosen = {v: math.nan if e is None else e for v, e in fold.items()}
    w = min(WEIGHTS, key=lambda v: math.inf if math.isnan(chosen[v]) else chosen[v])
    G = fit(Xtr, np.log(Ttr))(X)
    return {"G": _mape(G, T), "blend": _mape(P ** (1 - w) * G ** w, T), "w": w,
            "fold": chosen[w]}


def probe(case: Case, seed: int, runs: int) -> dict[str, Any] | None:
    """One campaign to ``runs`` runs and every variant at that point (None: never reached)."""
    _install_hook()
    GRAB.clear()
    GRAB["target"] = runs
    run_quietly(case, seed, runs)
    if "X" not in GRAB:
        return None
    X, T = _table(case)
    P = GRAB["model"].predict_many(X)
    levels = [sorted(set(X[:, j])) for j in range(X.shape[1])]
    row: dict[str, Any] = {"case": case.name, "seed": seed, "runs": runs, "P": _mape(P, T)}
    for name, fit in _variants(levels).items():
        row[name] = _variant_row(fit, X, T, P)
    return row


def score(rows: Sequence[dict[str, Any]]) -> str:
    """Medians per mark (runs as a share of the configurations when marks were shares)."""
    lines = []
    for mark in sorted({r["mark"] for r in rows}):
        at = [r for r in rows if r["mark"] == mark]
        P = np.array([r["P"] for r in at])
        lines.append(f"mark {mark}: {len(at)} campaigns; delivered median {np.median(P):.1f}%, "
                     f"> 10% in {int((P > 10).sum())}")
        for name in ("m52-log", "se-log", "m52-rank", "nimo-rank"):
            G = np.array([r[name]["G"] for r in at])
            B = np.array([r[name]["blend"] for r in at])
            ratio = np.median(B / np.array([r[name]["fold"] for r in at]))
            lines.append(
                f"  {name:9s} G {np.median(G):5.1f}  blend {np.median(B):5.1f} (> 10%: "
                f"{int((B > 10).sum())}; better / worse than delivered by 0.5: "
                f"{int((B < P - 0.5).sum())} / {int((B > P + 0.5).sum())}; "
                f"external / fold error {ratio:.2f})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="blend_probe", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("suite")
    run.add_argument("--marks", default="0.2,0.3")
    run.add_argument("--seeds", default="1")
    run.add_argument("--apps", type=int, default=60)
    run.add_argument("--out", required=True)
    sc = sub.add_parser("score")
    sc.add_argument("file")
    args = ap.parse_args(argv)
    if args.cmd == "score":
        print(score([json.loads(line) for line in Path(args.file).read_text().splitlines()]))
        return 0
    with open(args.out, "a") as out:
        for mark in (float(m) for m in args.marks.split(",")):
            for case in load_suite(args.suite)[:args.apps]:
                runs = math.ceil(mark * case.configurations) if mark <= 1 else int(mark)
                for seed in (int(s) for s in args.seeds.split(",")):
                    row = probe(case, seed, max(runs, MIN_RUNS))
                    if row is not None:
                        print(json.dumps({"mark": mark, **row}), file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
