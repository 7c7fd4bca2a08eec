"""The paper's Equation 2, T = D x (o_a + o_n + o_d), in one place.

A model of kind ``occupancy`` predicts the data flow D and the occupancies o_a, o_n, o_d
(seconds per unit of data on compute, network and disk); a ``direct`` model predicts T.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

KINDS = {"occupancy": ("o_a", "o_n", "o_d", "D"), "direct": ("T",)}
OCCUPANCIES = ("o_a", "o_n", "o_d")


def total_time(parts: Mapping[str, np.ndarray]) -> np.ndarray:
    """T from the predicted targets: ``T`` itself if present, else D x (o_a + o_n + o_d)."""
    if "T" in parts:
        return parts["T"]
    return parts["D"] * (parts["o_a"] + parts["o_n"] + parts["o_d"])
