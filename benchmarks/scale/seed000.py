"""Acceptance 5 of issue 12: seed 000's comparison on a dataset with input attributes.

Data: Scout (completed runs), one case per workload and framework over both data sizes, with
attributes nodes, vcpus_per_node, mem_gib_per_node and the input size ``input_gb`` (the
median input of the workload group, a load attribute). Per case and seed, a random test set
of all configurations but 120 is withheld; from the other 120, training sets of
N_f = 12 q runs (q = 1..10, nested, random order) train every model, and the relative error
on the test set is averaged over the 10 fractions (seed 000's Eq. 6).

Baselines as in seed 000: standardised attributes, raw run time (standardised inside SVR),
5-fold grid-search cross-validation (R^2) of SVR (RBF), kNN and polynomial regression. The
project's models: ``nimo`` (its automatic term selection on T), and ``auto`` (the family
chosen by the honest estimate among nimo, paper, product, scaling, ernest, loglog2, knn).
Grids fixed a priori.

Usage: python benchmarks/scale/seed000.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from nimo.families import AUTO_CANDIDATES, choose_family, fit_family  # noqa: E402

SCOUT = ROOT.parent / "shared" / "datasets" / "scout" / "scout_multinode_runtimes.csv"
ATTRS = ("nodes", "vcpus_per_node", "mem_gib_per_node", "input_gb")
POOL = 120
FRACTIONS = [12 * q for q in range(1, 11)]
GRIDS = {
    "svr": {"m__regressor__C": [0.1, 1, 10, 100], "m__regressor__gamma": [0.01, 0.1, 1.0],
            "m__regressor__epsilon": [0.01, 0.1, 0.5]},
    "knn": {"m__n_neighbors": [1, 2, 3, 5, 7, 9], "m__weights": ["uniform", "distance"]},
    "pol": {"p__degree": [1, 2, 3]},
}
MODELS = ("svr", "knn", "pol", "nimo", "auto")


def cases() -> dict[str, tuple[list[dict], np.ndarray]]:
    with SCOUT.open(newline="") as fh:
        data = [r for r in csv.DictReader(fh) if r["completed"] == "True"]
    size = {}
    for g in {r["workload_group"] for r in data}:
        vals = sorted(float(r["input_size"]) for r in data if r["workload_group"] == g)
        size[g] = round(vals[len(vals) // 2] / 1e9, 3)
    out = {}
    for job in sorted({(r["workload"], r["framework"]) for r in data}):
        rs = [r for r in data if (r["workload"], r["framework"]) == job]
        if len({size[r["workload_group"]] for r in rs}) < 2 or len(rs) <= POOL:
            continue
        rows = [{"nodes": float(r["nodes"]), "vcpus_per_node": float(r["vcpus_per_node"]),
                 "mem_gib_per_node": float(r["mem_gib_per_node"]),
                 "input_gb": size[r["workload_group"]]} for r in rs]
        out["_".join(job)] = (rows, np.array([float(r["elapsed_time_s"]) for r in rs]))
    return out


def baseline(name: str, X: np.ndarray, y: np.ndarray):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler
    from sklearn.svm import SVR

    svr = TransformedTargetRegressor(SVR(kernel="rbf"), transformer=StandardScaler())
    steps = {"svr": [("s", StandardScaler()), ("m", svr)],
             "knn": [("s", StandardScaler()), ("m", KNeighborsRegressor())],
             "pol": [("s", StandardScaler()), ("p", PolynomialFeatures()),
                     ("m", LinearRegression())]}[name]
    grid = dict(GRIDS[name])
    if name == "knn":
        grid["m__n_neighbors"] = [k for k in grid["m__n_neighbors"] if k <= len(y) * 4 // 5]
    search = GridSearchCV(Pipeline(steps), grid, cv=KFold(5, shuffle=True, random_state=0),
                          scoring="r2")
    return search.fit(X, y).best_estimator_


def predict(name: str, rows: list[dict], y: np.ndarray, test: list[dict]) -> np.ndarray:
    numeric = {"numeric": ATTRS, "load": ("input_gb",)}
    if name == "nimo":
        return fit_family("nimo", rows, y, **numeric).predict(test)
    if name == "auto":
        return choose_family(AUTO_CANDIDATES, rows, y, **numeric).model.predict(test)
    X = np.array([[r[a] for a in ATTRS] for r in rows])
    Xt = np.array([[r[a] for a in ATTRS] for r in test])
    return baseline(name, X, y).predict(Xt)


def eq6(rows: list[dict], T: np.ndarray, seed: int) -> dict[str, float]:
    """Relative error (%) on the test set averaged over the 10 training fractions."""
    perm = np.random.default_rng([seed, 6]).permutation(len(rows))
    pool, test = perm[:POOL], perm[POOL:]
    test_rows, yt = [rows[i] for i in test], T[test]
    out = {}
    for m in MODELS:
        errs = []
        for n in FRACTIONS:
            train = pool[:n]
            p = predict(m, [rows[i] for i in train], T[train], test_rows)
            errs.append(float(np.mean(np.abs(p - yt) / yt)) * 100)
        out[m] = float(np.mean(errs))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print("Scout with the input size, seed 000's Eq. 6: mean relative error (%) on the test "
          f"set averaged over N_f = 12..120 training runs, median over {args.seeds} seeds")
    print(f"{'case':22} {'n':>4} " + " ".join(f"{m:>7}" for m in MODELS))
    table: dict[str, list[float]] = {m: [] for m in MODELS}
    for name, (rows, T) in cases().items():
        per = [eq6(rows, T, s) for s in range(args.seeds)]
        med = {m: statistics.median(p[m] for p in per) for m in MODELS}
        for m in MODELS:
            table[m].append(med[m])
        print(f"{name:22} {len(rows):4d} " + " ".join(f"{med[m]:7.1f}" for m in MODELS),
              flush=True)
    print(f"{'mean over cases':22} {'':4} " + " ".join(
        f"{statistics.mean(table[m]):7.1f}" for m in MODELS))
    print(f"{'median over cases':22} {'':4} " + " ".join(
        f"{statistics.median(table[m]):7.1f}" for m in MODELS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
