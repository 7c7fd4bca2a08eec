"""k nearest neighbours with a weighted mean and variance (seed 002).

Distance: numeric attributes on ``log`` scale when positive (else linear), each divided by
its training range; a differing category counts as distance 1. Weights ``1 / (d + eps)``;
the prediction is the weighted mean of the neighbours' log run times (exponentiated) and its
spread their weighted variance. ``k`` is chosen among 1..7 by leave-one-out on the training
runs only. Prediction needs numpy and the exported training points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nimo.families.encoding import Encoder, Row

EPS = 1e-6
K_CHOICES = (1, 2, 3, 4, 5, 7)
# A query beyond this many training ranges on an axis is held there: its neighbours are those
# of the limit (nearest on that axis first), and squared distances never overflow.
FAR = 1e6


def features(encoder: Encoder, rows: Sequence[Row], logs: Sequence[bool]) -> np.ndarray:
    Z = encoder.numbers(rows)
    cols = [np.log(Z[:, j]) if logs[j] else Z[:, j] for j in range(Z.shape[1])]
    return np.column_stack(cols + list(encoder.onehot(rows).T)) if cols or encoder.categorical \
        else np.zeros((len(rows), 0))


CHUNK = 256  # query rows per distance block: 256 x 10,000 training rows is 20 MB


def _neighbours(F: np.ndarray, train: np.ndarray, k: int, skip_self: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """(indices, distances) of each row's ``k`` nearest training rows, nearest first (ties
    by index); ``skip_self``: row i of F is training row i, left out. Blocks of rows, so
    memory stays linear in the training set."""
    k = min(k, train.shape[0] - (1 if skip_self else 0))
    idx = np.empty((F.shape[0], k), dtype=np.intp)
    dist = np.empty((F.shape[0], k))
    for start in range(0, F.shape[0], CHUNK):
        block = F[start:start + CHUNK]
        d = np.zeros((block.shape[0], train.shape[0]))
        for j in range(train.shape[1]):  # axis by axis: no (rows x runs x axes) array
            d += (block[:, j, None] - train[None, :, j]) ** 2
        np.sqrt(d, out=d)
        if skip_self:
            rows = np.arange(block.shape[0])
            d[rows, start + rows] = np.inf
        order = _smallest(d, k)
        idx[start:start + CHUNK] = order
        dist[start:start + CHUNK] = np.take_along_axis(d, order, axis=1)
    return idx, dist


def _smallest(d: np.ndarray, k: int) -> np.ndarray:
    """Per row, the columns of the ``k`` smallest values, smallest first and ties by column
    (a stable sort's first ``k``), in linear time per row: a partition finds the k-th value,
    and of the values equal to it the lowest columns are kept."""
    if k == 0:
        return np.empty((d.shape[0], 0), dtype=np.intp)
    kth = np.partition(d, k - 1, axis=1)[:, k - 1:k]
    below, tied = d < kth, d == kth
    keep = below | (tied & (np.cumsum(tied, axis=1) <= k - below.sum(axis=1, keepdims=True)))
    cols = np.nonzero(keep)[1].reshape(d.shape[0], k)
    return np.take_along_axis(cols, np.argsort(np.take_along_axis(d, cols, axis=1), axis=1,
                                               kind="stable"), axis=1)


def weighted(idx: np.ndarray, dist: np.ndarray, logy: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """(weighted mean, weighted variance) of ``logy`` over each row's neighbours."""
    w = 1.0 / (dist + EPS)
    w = w / w.sum(axis=1, keepdims=True)
    vals = logy[idx]
    mean = (w * vals).sum(axis=1)
    return mean, (w * (vals - mean[:, None]) ** 2).sum(axis=1)


def fit(encoder: Encoder, rows: Sequence[Row], T: np.ndarray) -> dict[str, Any]:
    Z = encoder.numbers(rows)
    logs = [bool(np.all(Z[:, j] > 0)) for j in range(Z.shape[1])]
    F = features(encoder, rows, logs)
    lo, span = F.min(axis=0), np.ptp(F, axis=0)
    span = np.where(span > 0, span, 1.0)
    F = (F - lo) / span
    logy = np.log(np.asarray(T, dtype=float))
    best_k, best_err = 1, np.inf
    if len(rows) > 1:
        # one search for the largest k: a smaller k's neighbours are its first columns
        near_idx, near_dist = _neighbours(F, F, max(K_CHOICES), skip_self=True)
        for k in K_CHOICES:
            idx, dist = near_idx[:, :k], near_dist[:, :k]
            err = float(np.mean(np.abs(np.expm1(weighted(idx, dist, logy)[0] - logy))))
            if err < best_err - 1e-12:
                best_k, best_err = k, err
    return {"k": best_k, "log": logs, "lo": lo.tolist(), "span": span.tolist(),
            "points": F.tolist(), "log_T": logy.tolist()}


def predict(encoder: Encoder, params: Mapping[str, Any], rows: Sequence[Row]
            ) -> tuple[np.ndarray, np.ndarray]:
    """(predicted T, weighted variance of log T) for ``rows``."""
    F = features(encoder, rows, params["log"])
    F = np.clip((F - np.asarray(params["lo"])) / np.asarray(params["span"]), -FAR, FAR)
    train = np.asarray(params["points"], dtype=float).reshape(-1, F.shape[1])
    idx, dist = _neighbours(F, train, int(params["k"]))
    mean, var = weighted(idx, dist, np.asarray(params["log_T"], dtype=float))
    return np.exp(mean), var
