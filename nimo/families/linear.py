"""Forms linear in their coefficients, kept as fixed-size sufficient statistics (seed 004).

Each form maps encoded rows to a basis ``H`` (and the run time to a response ``r``: ``T`` or
``log T``); the fit keeps ``H^T H``, ``H^T r`` and ``n`` only, and solves from them, so adding
observed runs (``update``) gives exactly the batch fit of all runs (no stored observations):

* ``product`` (seed 004): ``T = prod_j (a_j0 + a_j1 g_j)`` expanded, ``g = 1/x`` for a
  capacity and ``x`` for a load attribute: one column per subset of attributes; ordinary LS.
* ``scaling`` (seed 003): ``T = sum_j (a_j x_j + b_j / x_j + c_j / sqrt(x_j))`` with every
  coefficient >= 0 (non-negative least squares), no intercept.
* ``ernest`` (Ernest): ``T = t0 + sum_j (t1 / x_j + t2 log x_j + t3 x_j)``, all >= 0 (NNLS).
* ``loglog2``: ``log T = b0 + sum_j (c_j log x_j + d_j (log x_j)^2)``; ordinary LS.

Categories enter additively as 0/1 columns (the first dropped where an intercept exists).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimo.errors import DataError, ModelError
from nimo.families.encoding import Encoder, Row, positive

LINEAR_FORMS = ("product", "scaling", "ernest", "loglog2")
NONNEGATIVE = ("scaling", "ernest")
LOG_RESPONSE = ("loglog2",)
MAX_PRODUCT_ATTRIBUTES = 6


def basis(form: str, encoder: Encoder, rows: Sequence[Row]) -> np.ndarray:
    """The design matrix of ``form`` for ``rows`` (numeric columns scaled by the encoder)."""
    Z = encoder.numbers(rows)
    if form == "product":
        return np.hstack([_product(encoder, positive(Z, encoder, form)),
                          encoder.onehot(rows, drop_first=True)])
    if form == "scaling":
        Z = positive(Z, encoder, form)
        cols = [c for j in range(Z.shape[1]) for c in (Z[:, j], 1 / Z[:, j], Z[:, j] ** -0.5)]
        return np.column_stack(cols + list(encoder.onehot(rows).T))
    if form == "ernest":
        Z = positive(Z, encoder, form)
        cols = [np.ones(len(rows))] + [c for j in range(Z.shape[1])
                                       for c in (1 / Z[:, j], np.log(Z[:, j]), Z[:, j])]
        return np.column_stack(cols + list(encoder.onehot(rows, drop_first=True).T))
    if form == "loglog2":
        L = np.log(positive(Z, encoder, form))
        cols = [np.ones(len(rows))] + [c for j in range(L.shape[1]) for c in (L[:, j],
                                                                           L[:, j] ** 2)]
        return np.column_stack(cols + list(encoder.onehot(rows, drop_first=True).T))
    raise ModelError(f"unknown linear form {form!r}", hint="valid: " + ", ".join(LINEAR_FORMS))


def _product(encoder: Encoder, Z: np.ndarray) -> np.ndarray:
    k = Z.shape[1]
    if k > MAX_PRODUCT_ATTRIBUTES:
        raise ModelError(f"family product: {k} numeric attributes give 2^{k} terms",
                         hint=f"use at most {MAX_PRODUCT_ATTRIBUTES}")
    g = np.column_stack([Z[:, j] if encoder.numeric[j] in encoder.load else 1 / Z[:, j]
                         for j in range(k)]) if k else Z
    cols = [np.prod(g[:, list(s)], axis=1) if s else np.ones(Z.shape[0])
            for size in range(k + 1) for s in itertools.combinations(range(k), size)]
    return np.column_stack(cols)


def response(form: str, T: np.ndarray) -> np.ndarray:
    T = np.asarray(T, dtype=float).reshape(-1)
    if np.any(T <= 0) or not np.all(np.isfinite(T)):
        raise DataError("run times must be finite and > 0")
    return np.log(T) if form in LOG_RESPONSE else T


@dataclass(frozen=True)
class Stats:
    """``H^T H``, ``H^T r`` and the run count: all a linear form needs (fixed size)."""

    hth: np.ndarray
    htr: np.ndarray
    n: int

    @classmethod
    def of(cls, H: np.ndarray, r: np.ndarray) -> Stats:
        return cls(H.T @ H, H.T @ r, int(H.shape[0]))

    def plus(self, H: np.ndarray, r: np.ndarray) -> Stats:
        return Stats(self.hth + H.T @ H, self.htr + H.T @ r, self.n + int(H.shape[0]))

    def to_dict(self) -> dict[str, Any]:
        return {"hth": self.hth.tolist(), "htr": self.htr.tolist(), "n": self.n}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Stats:
        try:
            return cls(np.array(d["hth"], dtype=float), np.array(d["htr"], dtype=float),
                       int(d["n"]))
        except (KeyError, TypeError, ValueError) as e:
            raise ModelError(f"corrupt family model: bad 'stats' ({e})") from None


def solve(form: str, stats: Stats) -> np.ndarray:
    """Coefficients minimising ``|H c - r|^2`` from the statistics alone (minimum-norm for a
    rank-deficient ``H``; ``c >= 0`` for the non-negative forms)."""
    w, V = np.linalg.eigh(stats.hth)
    keep = w > 1e-12 * max(float(w.max(initial=0.0)), 1e-300)
    if form not in NONNEGATIVE:
        Vk = V[:, keep]
        return Vk @ ((Vk.T @ stats.htr) / w[keep])
    from scipy.optimize import nnls

    # |H c - r|^2 = |R c - d|^2 + const with R = sqrt(W) V^T, d = W^-1/2 V^T H^T r
    R = np.sqrt(w[keep])[:, None] * V[:, keep].T
    d = (V[:, keep].T @ stats.htr) / np.sqrt(w[keep])
    coef, _ = nnls(R, d, maxiter=50 * R.shape[1] + 100)
    return np.asarray(coef, dtype=float)


def fit_stats(form: str, encoder: Encoder, rows: Sequence[Row], T: np.ndarray) -> Stats:
    return Stats.of(basis(form, encoder, rows), response(form, T))


def predict(form: str, encoder: Encoder, coef: np.ndarray, rows: Sequence[Row]) -> np.ndarray:
    eta = basis(form, encoder, rows) @ coef
    return np.exp(eta) if form in LOG_RESPONSE else eta
