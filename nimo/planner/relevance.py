"""Relevance from PBDF runs (Appendix A): rank attributes per predictor and the predictors.

The runs' assignments are mapped to [-1, +1] per attribute (exactly +-1 unless a row had to be
snapped to an inner level); effects are |sum x_ij y_i|.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nimo.doe import effects
from nimo.records import Sample
from nimo.space import ResourceSpace


def coded(space: ResourceSpace, samples: Sequence[Sample]) -> np.ndarray:
    X = np.asarray([space.from_dict(s.assignment) for s in samples], float)
    lo = np.array([a.lo for a in space.attributes])
    span = np.array([(a.hi - a.lo) or 1.0 for a in space.attributes])
    return 2.0 * (X - lo) / span - 1.0


def rank_attributes(space: ResourceSpace, samples: Sequence[Sample], target: str) -> list[str]:
    """Attributes in decreasing order of effect on ``target`` (o_a, o_n, o_d, D or T)."""
    y = np.asarray([s.target(target) for s in samples], float)
    e = effects(coded(space, samples), y)
    order = np.argsort(-e, kind="stable")
    return [space.names[int(i)] for i in order]


def rank_predictors(space: ResourceSpace, samples: Sequence[Sample]) -> list[str]:
    """Predictors in decreasing order of their effect on T: the summed attribute effects of
    their contribution to T (D*o_a, D*o_n, D*o_d, and D times the mean occupancy for f_D)."""
    X = coded(space, samples)
    D = np.asarray([s.target("D") for s in samples], float)
    occ = {t: np.asarray([s.target(t) for s in samples], float) for t in ("o_a", "o_n", "o_d")}
    contrib = {
        "f_a": D * occ["o_a"],
        "f_n": D * occ["o_n"],
        "f_d": D * occ["o_d"],
        "f_D": D * float(np.mean(occ["o_a"] + occ["o_n"] + occ["o_d"])),
    }
    score = {p: float(effects(X, y).sum()) for p, y in contrib.items()}
    return sorted(score, key=lambda p: (-score[p], list(contrib).index(p)))


def _contributions(s: Sample, mean_occ: float) -> dict[str, float]:
    D = s.target("D")
    return {"f_a": D * s.target("o_a"), "f_n": D * s.target("o_n"),
            "f_d": D * s.target("o_d"), "f_D": D * mean_occ}


def ofat_attribute_order(
    space: ResourceSpace, ref: Sample, probes: dict[str, Sample], target: str
) -> tuple[list[str], dict[str, float]]:
    """Attributes by |y(probe) - y(ref)|, each probe moving one attribute to its far extreme
    (one-factor-at-a-time screening around the reference: k runs instead of PBDF's 2n).
    Returns the order and the effects."""
    y0 = ref.target(target)
    effect = {a: abs(probes[a].target(target) - y0) if a in probes else 0.0
              for a in space.names}
    order = sorted(space.names, key=lambda a: (-effect[a], space.names.index(a)))
    return order, effect


def ofat_predictor_order(ref: Sample, probes: dict[str, Sample]) -> list[str]:
    """Predictors by the summed change of their contribution to T across the probes."""
    occ = [s.target("o_a") + s.target("o_n") + s.target("o_d") for s in (ref, *probes.values())]
    mean_occ = float(np.mean(occ))
    base = _contributions(ref, mean_occ)
    score = {p: 0.0 for p in base}
    for s in probes.values():
        for p, c in _contributions(s, mean_occ).items():
            score[p] += abs(c - base[p])
    names = list(base)
    return sorted(names, key=lambda p: (-score[p], names.index(p)))
