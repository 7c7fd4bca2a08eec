"""The blend weight the folds choose against the weight best on unseen assignments: a probe
(issue 9; nothing here changes a design).

For each case, seed and design (default ``recommended`` and ``random-same.yaml``), the
design runs without stopping to a mark (a share of the configurations); at that point the
hook takes the learner's 5-fold error of the blend ``P^(1-v) G^v`` (``v = w c(x)``, as
``nimo.planner.blend``) at every weight w, the external MAPE of the same blend at every w
over the assignments no run measured (their mean T), and two distances in rank-scaled
space: each run's to its nearest other run (what a fold holds out) and each unmeasured
assignment's to its nearest run (what the model is asked), and the fold error judged at
the distances the model is asked about (``fold_trend``: :func:`distance_judge`;
``fold_matched``: :func:`_matched`). ``score`` prints, per design,
the external error of the chosen, the best and the process-free weight, how often the
folds choose too small or too large a weight, the external / fold error ratio per weight,
and the external error had the folds' ``GAIN`` been another value::

    PYTHONPATH=. python -m benchmarks.learning.weight_probe run tuning-small --out /tmp/w.jsonl
    PYTHONPATH=. python -m benchmarks.learning.weight_probe score /tmp/w.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.learning.blend_probe import (
    _table,
    on_learner,
    parametric_out_of_fold,
    run_quietly,
)
from benchmarks.learning.suites import load_suite

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
DESIGNS = "recommended,benchmarks/learning/random-same.yaml"
GAINS = (0.8, 0.9, 1.0)
GRAB: dict[str, Any] = {}


def _install_hook() -> None:
    """Probe the learner once it first holds ``GRAB["target"]`` runs."""

    def grab(learner: Any) -> None:
        if learner.n == GRAB.get("target") and "w" not in GRAB:
            GRAB.update(_probe(learner, *GRAB["table"]))

    on_learner("weight_probe", grab)


def _probe(learner: Any, X_all: np.ndarray, T_all: np.ndarray) -> dict[str, Any]:
    """Fold and external errors of the blend at every weight, and the two distances."""
    from nimo.metrics import internal_apes
    from nimo.model.gp import blended
    from nimo.model.support import clip_to_bounds
    from nimo.planner.crossval import RUN_ERROR_CAP_PCT, error_of, fold_ids
    from nimo.predictors.gp import fit_process

    P_oof = parametric_out_of_fold(learner)  # also runs the cross-validation
    X, T, hold = learner.X, learner.T(), learner.bounds()
    hyper = learner._gp_hyper(X, T)
    process = None if hyper is None else fit_process(learner.level_lists, X, T, hyper)
    if process is None:
        return {"w": learner.blend_weight}
    g_oof, c_oof, _, _ = learner._blend.fold_predictions(
        learner.level_lists, X, T, fold_ids(learner.n, 5, learner.n), hyper)
    seen = {tuple(r) for r in X}
    unseen = np.array([tuple(r) not in seen for r in X_all])
    Xu, Tu = X_all[unseen], T_all[unseen]
    P = dataclasses.replace(learner.model(), gp=None, gp_weight=0.0).predict_many(Xu)
    G, c = process.predict_informed(Xu)
    d_runs, d_unseen = _nearest(learner.level_lists, X, Xu)
    trend = _trend_judge(d_runs, d_unseen)
    oof = {w: clip_to_bounds(blended(P_oof, g_oof, w * c_oof), hold) for w in WEIGHTS}
    return {
        "w": learner.blend_weight,
        "fold": {w: error_of(T, t) for w, t in oof.items()},
        "fold_matched": {w: _matched(internal_apes(T, t, RUN_ERROR_CAP_PCT), d_runs, d_unseen)
                         for w, t in oof.items()},
        "fold_trend": {w: trend(T, t) for w, t in oof.items()},
        "ext": {w: float(np.mean(np.abs(clip_to_bounds(blended(P, G, w * c), hold) - Tu)
                                 / Tu) * 100) for w in WEIGHTS},
        **_median_distances(d_runs, d_unseen),
    }


def _distances(levels: Sequence[Sequence[float]], X: np.ndarray, Xu: np.ndarray
               ) -> dict[str, float]:
    """Median rank-scaled distance of a run to its nearest other run, and of an unmeasured
    assignment to its nearest run (the model's ``Support``)."""
    return _median_distances(*_nearest(levels, X, Xu))


def _median_distances(d_runs: np.ndarray, d_unseen: np.ndarray) -> dict[str, float]:
    return {"d_runs": float(np.median(d_runs)), "d_unseen": float(np.median(d_unseen))}


def run(suite: str, mark: float, seeds: Sequence[int], designs: Sequence[str], out: Path,
        apps: int) -> None:
    _install_hook()
    with out.open("a") as fh:
        for case in load_suite(suite)[:apps]:
            table = _table(case)
            runs = max(math.ceil(mark * case.configurations), 5)
            for seed in seeds:
                for design in designs:
                    GRAB.clear()
                    GRAB.update(target=runs, table=table)
                    run_quietly(case, seed, runs, design)
                    row = {k: v for k, v in GRAB.items() if k not in ("table", "target")}
                    print(json.dumps({"case": case.name, "seed": seed, "runs": runs,
                                      "design": Path(design).stem, **row}), file=fh, flush=True)


def _nearest(levels: Sequence[Sequence[float]], X: np.ndarray, Xu: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Each run's rank-scaled distance to its nearest other run, each unmeasured
    assignment's to its nearest run."""
    from nimo.model.support import Support, nearest_other

    runs = Support(levels, X.tolist())
    return nearest_other(runs.scaled), runs.distance(Xu)


def _matched(apes: np.ndarray, d_runs: np.ndarray, d_unseen: np.ndarray) -> float:
    """The runs' mean error weighted by how many unmeasured assignments sit at their
    distance (each assignment counts for the run whose distance is nearest its own)."""
    nearest = np.abs(d_unseen[:, None] - d_runs[None, :]).argmin(axis=1)
    weight = np.bincount(nearest, minlength=d_runs.size)
    return float(np.average(apes, weights=weight))


def distance_judge(levels: Sequence[Sequence[float]], X: np.ndarray,
                   unmeasured: np.ndarray) -> Callable[[np.ndarray, np.ndarray], float | None]:
    """The out-of-fold error where the model is asked: each run's (capped) error regressed
    on its rank-scaled distance to the nearest other run (a straight line, slope at least 0)
    and averaged over the unmeasured assignments' distances to the nearest run."""
    return _trend_judge(*_nearest(levels, X, unmeasured))


def _trend_judge(d_runs: np.ndarray, d_asked: np.ndarray
                 ) -> Callable[[np.ndarray, np.ndarray], float | None]:
    """:func:`distance_judge` from the runs' and the asked assignments' distances."""
    from nimo.metrics import internal_apes
    from nimo.planner.crossval import RUN_ERROR_CAP_PCT, error_of

    def judge(T: np.ndarray, predicted: np.ndarray) -> float | None:
        ok = np.isfinite(predicted)
        if ok.sum() < 2:
            return error_of(T, predicted)
        apes, d = internal_apes(T[ok], predicted[ok], RUN_ERROR_CAP_PCT), d_runs[ok]
        spread = float(np.var(d)) if np.ptp(d) > 1e-9 * float(d.max()) else 0.0
        slope = float(np.mean((d - d.mean()) * (apes - apes.mean()))) / spread if spread else 0.0
        if not slope > 0:
            return float(np.mean(apes))
        return float(np.mean(np.maximum(apes.mean() + slope * (d_asked - d.mean()), 0.0)))

    return judge


def _weight_at_gain(fold: dict[str, float | None], gain: float) -> str:
    """The weight the folds choose when it must cut the process-free fold error by ``gain``."""
    scored = {w: e for w, e in fold.items() if e is not None}
    if "0.0" not in scored:
        return "0.0"
    best = min(scored, key=lambda w: (scored[w], float(w)))
    return best if scored[best] < gain * scored["0.0"] else "0.0"


def score(rows: Sequence[dict[str, Any]]) -> str:
    lines = []
    for design in sorted({r["design"] for r in rows}):
        at = [r for r in rows if r["design"] == design and "ext" in r]
        if not at:
            continue
        chosen = np.array([float(r["w"]) for r in at])
        best = np.array([float(min(r["ext"], key=r["ext"].get)) for r in at])
        ext = {name: np.median([r["ext"][w(r)] for r in at]) for name, w in (
            ("none", lambda r: "0.0"), ("chosen", lambda r: str(float(r["w"]))),
            ("best", lambda r: min(r["ext"], key=r["ext"].get)))}
        ratio = {w: np.median([r["ext"][w] / r["fold"][w] for r in at if r["fold"][w]])
                 for w in at[0]["ext"]}
        gains = {g: np.median([r["ext"][_weight_at_gain(r["fold"], g)] for r in at])
                 for g in GAINS}
        adjusted = {k: np.median([r["ext"][_weight_at_gain(r[k], GAINS[0])] for r in at])
                    for k in ("fold", "fold_matched", "fold_trend") if k in at[0]}
        lines += [
            f"{design}: {len(at)} campaigns with a kernel; external MAPE median: no process "
            f"{ext['none']:.1f}, chosen weight {ext['chosen']:.1f}, best weight "
            f"{ext['best']:.1f}",
            f"  weight > 0: chosen {np.mean(chosen > 0):.0%}, best {np.mean(best > 0):.0%}; "
            f"chosen below the best {np.mean(chosen < best):.0%}, "
            f"above {np.mean(chosen > best):.0%}",
            "  external / fold error by weight: " + "  ".join(
                f"{w}: {v:.2f}" for w, v in ratio.items()),
            f"  run-to-run / unmeasured-to-run distance: "
            f"{np.median([r['d_runs'] / r['d_unseen'] for r in at]):.2f}",
            "  external at GAIN " + ", ".join(f"{g}: {v:.2f}" for g, v in gains.items()),
            f"  external at GAIN {GAINS[0]}, folds judged by " + ", ".join(
                f"{k}: {v:.2f}" for k, v in adjusted.items())]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="weight_probe", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("suite")
    r.add_argument("--mark", type=float, default=0.2)
    r.add_argument("--seeds", default="1,2")
    r.add_argument("--designs", default=DESIGNS)
    r.add_argument("--apps", type=int, default=60)
    r.add_argument("--out", type=Path, required=True)
    sc = sub.add_parser("score")
    sc.add_argument("file", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "score":
        print(score([json.loads(line) for line in args.file.read_text().splitlines()]))
        return 0
    run(args.suite, args.mark, [int(s) for s in args.seeds.split(",")],
        args.designs.split(","), args.out, args.apps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
