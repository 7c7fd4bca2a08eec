"""The predictor functions and the sample quantity each one learns.

f_a, f_n, f_d and f_D learn the occupancies o_a, o_n, o_d and the data flow D
(T = f_D x (f_a + f_n + f_d)); f_T learns T directly when the data record only T.
"""

from __future__ import annotations

PREDICTOR_NAMES = ("f_a", "f_n", "f_d", "f_D")
TARGET_OF = {"f_a": "o_a", "f_n": "o_n", "f_d": "o_d", "f_D": "D", "f_T": "T"}
