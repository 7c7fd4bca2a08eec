"""Planning-step cost: pick the next experiment, refit, recompute the error.

10 attributes, an explicit list of candidate assignments, a synthetic application; the
planner (recommended design unless --design) is driven to ~500 samples and every step's
ask + tell is timed. Prints median and 95th percentile per sample count band, and at how
many of its steps the model blended its log-T process in (recommended's variance picks).
Usage: python benchmarks/planning_speed.py [--samples 500] [--design recommended]
[--force-blend]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nimo.planner import make_planner  # noqa: E402
from nimo.planner.design import parse_design  # noqa: E402
from nimo.records import RunOutcome, RunStatus, Sample  # noqa: E402
from nimo.space import Attribute, ResourceSpace  # noqa: E402
from workbench.designs import load_design  # noqa: E402

K = 10


def build_space(n_candidates: int, seed: int) -> ResourceSpace:
    rng = np.random.default_rng(seed)
    attrs = tuple(Attribute(f"a{i}", (1.0, 2.0, 3.0, 4.0, 5.0), -1 if i % 4 == 3 else 1)
                  for i in range(K))
    cands = {tuple(float(v) for v in rng.integers(1, 6, K)) for _ in range(n_candidates)}
    cands |= {tuple([5.0 if a.direction > 0 else 1.0 for a in attrs])}
    return ResourceSpace(attrs, tuple(sorted(cands)))


def sample(a: dict[str, float], rng: np.random.Generator) -> Sample:
    x = np.array(list(a.values()))
    o_a = 1.0 / x[0] + 0.2 / x[1] + 0.02 * x[4]
    o_n = 0.1 * x[3] + 0.05 / x[2] + 0.01 * x[5] * x[3]
    o_d = 0.05 + 0.01 * x[7]
    D = 100.0 * (1 + (x[6] < 2))
    noise = np.exp(rng.normal(0, 0.02, 4))
    o_a, o_n, o_d, D = o_a * noise[0], o_n * noise[1], o_d * noise[2], D * noise[3]
    return Sample(a, T=D * (o_a + o_n + o_d), D=D, o_a=o_a, o_n=o_n, o_d=o_d)


def force_blend() -> None:
    """Make every blend take weight 0.5 (benchmark only: the pick's cost does not depend on
    the weight, and on this application the folds never choose one)."""
    from nimo.planner.blend import Blend

    def choose(self: Blend, T: np.ndarray, parametric: np.ndarray, gp: np.ndarray,
               informed: object, hold: object) -> float:
        self.weight = self.chosen = 0.5 if np.isfinite(gp).all() else 0.0
        return self.weight

    Blend.choose = choose  # type: ignore[method-assign,assignment]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=500)
    ap.add_argument("--candidates", type=int, default=4000)
    ap.add_argument("--design", default="recommended")
    ap.add_argument("--force-blend", action="store_true",
                    help="a cost probe: the model always blends its process in (weight 0.5 "
                         "wherever the folds' process predicts), so every step after the "
                         "start and edges is recommended's variance pick")
    args = ap.parse_args()
    if args.force_blend:
        force_blend()
    space = build_space(args.candidates, 0)
    design = load_design(args.design).to_dict()
    design["stop"] = {"error_pct": 0, "min_samples": 1, "max_runs": args.samples + 1}
    planner = make_planner(space, parse_design(design), 0, "occupancy")
    rng = np.random.default_rng(1)
    steps: list[tuple[int, float, bool]] = []
    told = 0
    while True:
        # the model blends its log-T process in: recommended's picks are then variance picks
        blended = bool(planner.learner.blend_weight)
        t0 = time.perf_counter()
        batch = planner.ask()
        ask_s = time.perf_counter() - t0
        if not batch:
            break
        outs = [RunOutcome(r, RunStatus.DONE, sample=sample(dict(r.assignment), rng))
                for r in batch]
        t1 = time.perf_counter()
        for o in outs:
            planner.tell(o)
        tell_s = time.perf_counter() - t1
        told += len(batch)
        steps.append((told, (ask_s + tell_s) / len(batch), blended))
    print(f"\nPlanning step (ask + tell: choose, refit 4 predictors, recompute error), "
          f"{K} attributes, {len(space.candidates)} candidates, design {args.design}")
    print(f"{'samples':>12}{'median ms':>12}{'p95 ms':>10}{'steps':>7}{'blended':>9}")
    for lo, hi in ((1, 50), (50, 200), (200, 400), (400, args.samples + 1)):
        band = [(1000 * s, b) for n, s, b in steps if lo <= n < hi]
        ms = sorted(m for m, _ in band)
        if ms:
            p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
            print(f"{f'{lo}-{hi - 1}':>12}{statistics.median(ms):>12.1f}{p95:>10.1f}"
                  f"{len(ms):>7}{sum(b for _, b in band):>9}")
    print(f"stopped: {planner.stopped_because}; samples {planner.learner.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
