"""Time fit_predictor (selection + final fit + LOO) at n samples x k active attributes.

Usage: python benchmarks/predictor_speed.py [--n 500] [--k 10] [--repeat 20] [--design random]
Prints per-target median and per-step (4 predictors) median/min times in ms for each mode
and final-fit choice. The machine's load matters: compare the min when others are busy.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from nimo.predictors import PredictorOptions, fit_predictor


def make_data(n: int, k: int, design: str, seed: int = 0):
    """Synthetic space: k attributes with 6 levels; targets with reciprocal, cliff, saturation
    and an interaction; 3% multiplicative noise."""
    rng = np.random.default_rng(seed)
    names = [f"x{j}" for j in range(k)]
    levels = {a: np.linspace(1.0, 6.0, 6) * (j + 1) for j, a in enumerate(names)}
    ref = [float(levels[a][2]) for a in names]
    if design == "oat":  # L_max-I_1: one attribute varied at a time around the reference
        rows = []
        while len(rows) < n:
            j = int(rng.integers(k))
            row = list(ref)
            row[j] = float(rng.choice(levels[names[j]]))
            rows.append(row)
        X = np.array(rows)
    else:
        X = np.column_stack([rng.choice(levels[a], size=n) for a in names])
    Z = X / np.array(ref)
    noise = lambda: 1 + 0.03 * rng.standard_normal(n)  # noqa: E731
    ys = {
        "o_a": (1.0 / Z[:, 0] + 0.3 * np.maximum(0, 1.0 - Z[:, 1]) + 0.1 * Z[:, 2] / Z[:, 0])
        * noise(),
        "o_n": (0.5 + 0.4 * np.minimum(Z[:, 3], 1.2) + 0.05 * Z[:, 4]) * noise(),
        "o_d": (0.2 + 0.1 / Z[:, 5]) * noise(),
        "D": (100.0 + 5 * Z[:, 6]) * noise(),
    }
    return names, X, ys, ref, levels


def bench(n: int, k: int, repeat: int, design: str, opts: PredictorOptions) -> dict[str, float]:
    names, X, ys, ref, levels = make_data(n, k, design)
    out: dict[str, float] = {}
    total = []
    for t, y in ys.items():
        fit_predictor(t, X, y, names, names, ref, float(y[0]), levels, opts)  # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fit_predictor(t, X, y, names, names, ref, float(y[0]), levels, opts)
            times.append((time.perf_counter() - t0) * 1e3)
        out[t] = statistics.median(times)
        total.append(times)
    steps = [sum(x) for x in zip(*total, strict=True)]
    out["step"] = statistics.median(steps)
    out["step_min"] = min(steps)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--design", choices=("random", "oat"), default="random")
    a = ap.parse_args()
    print(f"n={a.n} k={a.k} design={a.design} (median of {a.repeat}, ms)")
    for mode in ("auto", "paper"):
        for final in ("statsmodels", "numpy"):
            r = bench(a.n, a.k, a.repeat, a.design, PredictorOptions(mode=mode, final_fit=final))
            per = "  ".join(f"{t}={v:6.2f}" for t, v in r.items() if not t.startswith("step"))
            print(f"{mode:5s} {final:11s}  {per}   step(4 fits) median={r['step']:6.2f}"
                  f" min={r['step_min']:6.2f}")


if __name__ == "__main__":
    main()
