"""Integrated variance reduction: how much one more run would cut the posterior variance of
a Gaussian process on log T (:mod:`nimo.model.gp`), summed over a set of target rows.

For a candidate x, measuring it shrinks the variance at a target c by ``cov(c, x)^2 /
(var(x) + noise)`` (the variance does not depend on the value measured, so runs still in
flight count as measured). The sum over the candidate space is what a model that
interpolates between runs gains; the largest variance alone would favour the corners.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from nimo.model.gp import LogTProcess, matern52
from nimo.model.support import seeded_rows

T = TypeVar("T")

# at most this many candidates are scored, over at most this many targets (seeded subsets):
# 500 runs, 300 x 300 take ~25 ms; the whole pool against 1,000 targets took ~400 ms
MAX_POOL = 300
MAX_TARGETS = 300


def variance_reduction(process: LogTProcess, pool: np.ndarray,
                       targets: np.ndarray) -> np.ndarray:
    """Per ``pool`` row, the summed cut of the posterior variance of log T over ``targets``
    if it were measured next (``process``: conditioned on the runs measured or in flight;
    the values do not matter, only where the runs are)."""
    P, C = process.scaled(np.asarray(pool, float)), process.scaled(np.asarray(targets, float))
    _, v_pool = process.whitened(P)
    _, v_targets = process.whitened(C)
    hyper = process.hyper
    cov = matern52(P, C, hyper) - v_pool.T @ v_targets
    var = np.maximum(hyper.signal - (v_pool * v_pool).sum(axis=0), 0.0)
    return (cov * cov).sum(axis=1) / (var + hyper.noise)


def over_rows(process: LogTProcess, rows: np.ndarray) -> LogTProcess:
    """``process`` itself when it is conditioned on exactly ``rows`` (in any order), else one
    with its kernel conditioned on ``rows`` (values 0: the variance ignores them)."""
    own = process.rows
    if own.shape == rows.shape and set(map(tuple, own)) == set(map(tuple, rows)):
        return process
    return LogTProcess(process.levels, rows, np.zeros(len(rows)), process.hyper)


def seeded_subset(items: Sequence[T], limit: int, seed: int) -> list[T]:
    """``items``, or a seeded subset of ``limit`` of them in their order."""
    if len(items) <= limit:
        return list(items)
    keep = np.sort(seeded_rows(len(items), limit, seed))
    return [items[int(i)] for i in keep]
