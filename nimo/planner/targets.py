"""The predictor functions and the sample quantity each one learns.

f_a, f_n, f_d and f_D learn the occupancies o_a, o_n, o_d and the data flow D
(T = f_D x (f_a + f_n + f_d)); f_T learns T directly when the data record only T.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

PREDICTOR_NAMES = ("f_a", "f_n", "f_d", "f_D")
TARGET_OF = {"f_a": "o_a", "f_n": "o_n", "f_d": "o_d", "f_D": "D", "f_T": "T"}

OCCUPANCY_PREDICTORS = ("f_a", "f_n", "f_d")
ALL_ROWS = slice(None)  # every sample


def share_scale(values: Mapping[str, Sequence[float]], predictor: str) -> np.ndarray | None:
    """What an occupancy predictor's errors are relative to with ``predictors.share_errors``:
    each sample's total occupancy o_a + o_n + o_d, so that an error counts by the share of T
    it moves (None for f_D and f_T, whose relative error is already T's)."""
    if predictor not in OCCUPANCY_PREDICTORS or not all(p in values
                                                        for p in OCCUPANCY_PREDICTORS):
        return None
    return np.sum([np.asarray(values[p], float) for p in OCCUPANCY_PREDICTORS], axis=0)
