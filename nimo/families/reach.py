"""How far a row lies from the runs a family model was fitted on (numpy only).

The distance is the nearest-neighbour one of :mod:`nimo.families.knn`: numeric attributes on
``log`` scale when every training value is positive (else linear), each divided by its
training range; a differing category adds ``sqrt(2)`` (two one-hot columns). The model keeps
the distinct training points in those units (``training.interval.reach``), so an interval
can widen with the distance of the row it is asked about (:mod:`nimo.families.interval`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nimo.errors import ModelError
from nimo.families import knn
from nimo.families.encoding import Encoder, Row


def reach_doc(encoder: Encoder, rows: Sequence[Row]) -> dict[str, Any]:
    """``{"log", "lo", "span", "points"}``: the scaling and the distinct training points."""
    Z = encoder.numbers(rows)
    logs = [bool(np.all(Z[:, j] > 0)) for j in range(Z.shape[1])]
    F = knn.features(encoder, rows, logs)
    lo, span = F.min(axis=0), np.ptp(F, axis=0)
    span = np.where(span > 0, span, 1.0)
    points = np.unique(np.round((F - lo) / span, 12), axis=0)
    return {"log": logs, "lo": lo.tolist(), "span": span.tolist(), "points": points.tolist()}


def scaled(encoder: Encoder, doc: Mapping[str, Any], rows: Sequence[Row]) -> np.ndarray:
    """``rows`` in the units of ``doc`` (clipped at ``knn.FAR`` training ranges)."""
    F = knn.features(encoder, rows, doc["log"])
    return np.clip((F - np.asarray(doc["lo"], dtype=float)) / np.asarray(doc["span"], dtype=float),
                   -knn.FAR, knn.FAR)


def nearest(F: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The distance of each row of ``F`` to its nearest row of ``points`` (inf without any)."""
    if points.shape[0] == 0:
        return np.full(F.shape[0], np.inf)
    return knn._neighbours(F, points, 1)[1][:, 0]


def distance(encoder: Encoder, doc: Any, rows: Sequence[Row]) -> np.ndarray:
    """Each row's distance to the nearest training point of ``doc`` (a ModelError naming the
    field when a file holds something else there)."""
    try:
        points = np.asarray(doc["points"], dtype=float)
        F = scaled(encoder, doc, rows)
        points = points.reshape(-1, F.shape[1])
        if len(doc["lo"]) != F.shape[1] or len(doc["span"]) != F.shape[1]:
            raise ValueError("widths differ")
    except (TypeError, ValueError, KeyError, IndexError):
        raise ModelError("corrupt family model: bad field 'training.interval.reach' (expected "
                         "log, lo, span and points in the encoder's columns)") from None
    return nearest(F, points)


def held_out_distances(encoder: Encoder, doc: Mapping[str, Any], rows: Sequence[Row],
                       splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """For each split in turn, each held-out row's distance to the split's training rows, in
    the units of ``doc`` (:func:`reach_doc` of all ``rows``; the out-of-fold errors' order)."""
    F = scaled(encoder, doc, rows)
    return np.concatenate([nearest(F[test], F[train]) for train, test in splits]) \
        if splits else np.empty(0)
