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


def bench(
    n: int, k: int, repeat: int, design: str, opts: PredictorOptions, clock=time.perf_counter
) -> dict[str, float]:
    names, X, ys, ref, levels = make_data(n, k, design)
    out: dict[str, float] = {}
    total = []
    for t, y in ys.items():
        fit_predictor(t, X, y, names, names, ref, float(y[0]), levels, opts)  # warm-up
        times = []
        for _ in range(repeat):
            t0 = clock()
            fit_predictor(t, X, y, names, names, ref, float(y[0]), levels, opts)
            times.append((clock() - t0) * 1e3)
        out[t] = statistics.median(times)
        total.append(times)
    steps = [sum(x) for x in zip(*total, strict=True)]
    out["step"] = statistics.median(steps)
    out["step_min"] = min(steps)
    return out


SPACE = {"cpu": [451.0, 797.0, 930.0, 996.0, 1396.0], "mem": [64.0, 128.0, 256.0, 512.0, 1024.0],
         "lat": [0.0, 2.0, 6.0, 10.0, 14.0, 18.0], "bw": [20.0, 40.0, 60.0, 80.0, 100.0]}
SREF = [930.0, 512.0, 6.0, 60.0]


def scenario(name: str, X: np.ndarray) -> dict[str, np.ndarray]:
    """Occupancies of synthetic applications (per MB of data flow, seconds)."""
    cpu, mem, lat, bw = X.T
    o_a = 0.5 * 930.0 / cpu
    o_n = 0.05 + 0.004 * lat + 0.8 / bw
    o_d = 0.02 + 0.0 * cpu
    if name == "cliff":  # working set 256 MB: paging below it
        o_a = o_a + 0.004 * np.maximum(0.0, 256.0 - mem)
    elif name == "saturation":  # no gain from bandwidth beyond 60 Mbps
        o_n = 0.05 + 0.004 * lat + 0.8 / np.minimum(bw, 60.0)
    elif name == "prefetch":  # latency hidden while the CPU is slow
        o_n = 0.05 + 0.8 / bw + 0.012 * lat * np.maximum(0.0, cpu - 600.0) / 796.0
    return {"o_a": o_a, "o_n": o_n, "o_d": o_d, "D": 500.0 + 0.0 * cpu}


def accuracy(design: str, n: int, seeds: int = 10) -> None:
    """External-test MAPE (%) of T, auto vs paper mode, 3% noise, 30 random test points."""
    from nimo.model import CostModel

    names = list(SPACE)
    attrs = [{"name": a, "levels": SPACE[a]} for a in names]
    for name in ("basic", "cliff", "saturation", "prefetch"):
        res = {"auto": [], "paper": []}
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            if design == "oat":
                rows = [list(SREF)]
                for j, a in enumerate(names):
                    for v in SPACE[a]:
                        row = list(SREF)
                        row[j] = v
                        rows.append(row)
                X = np.array(rows)
            else:
                X = np.column_stack([rng.choice(SPACE[a], n) for a in names])
            Xt = np.column_stack([rng.choice(SPACE[a], 30) for a in names])
            ys = {t: v * (1 + 0.03 * rng.standard_normal(len(X)))
                  for t, v in scenario(name, X).items()}
            truth = scenario(name, Xt)
            T = truth["D"] * (truth["o_a"] + truth["o_n"] + truth["o_d"])
            for mode in res:
                opts = PredictorOptions(mode=mode)
                preds = {t: fit_predictor(t, X, y, names, names, SREF, float(y[0]), SPACE, opts)
                         for t, y in ys.items()}
                model = CostModel(attrs, dict(zip(names, SREF, strict=True)), "occupancy", preds)
                res[mode].append(100 * np.mean(np.abs(model.predict_many(Xt) - T) / T))
        print(f"{name:11s} " + "  ".join(f"{m}={np.mean(v):5.2f}%" for m, v in res.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--design", choices=("random", "oat"), default="random")
    ap.add_argument("--accuracy", action="store_true", help="compare auto vs paper MAPE instead")
    ap.add_argument("--cpu", action="store_true",
                    help="time with process CPU time (robust when other jobs load the machine)")
    a = ap.parse_args()
    if a.accuracy:
        n = a.n if a.design == "random" else "OAT"
        print(f"external-test MAPE of T, design={a.design}, n={n}")
        accuracy(a.design, a.n)
        return
    clock = time.process_time if a.cpu else time.perf_counter
    kind = "CPU" if a.cpu else "wall"
    print(f"n={a.n} k={a.k} design={a.design} ({kind} time, median of {a.repeat}, ms)")
    for mode in ("auto", "paper"):
        for final in ("statsmodels", "numpy"):
            opts = PredictorOptions(mode=mode, final_fit=final)
            r = bench(a.n, a.k, a.repeat, a.design, opts, clock)
            per = "  ".join(f"{t}={v:6.2f}" for t, v in r.items() if not t.startswith("step"))
            print(f"{mode:5s} {final:11s}  {per}   step(4 fits) median={r['step']:6.2f}"
                  f" min={r['step_min']:6.2f}")


if __name__ == "__main__":
    main()
