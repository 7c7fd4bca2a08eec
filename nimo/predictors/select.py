"""Greedy forward selection of regression terms by closed-form leave-one-out error.

The current design is kept as an orthonormal basis Q (intercept first). For all candidate
columns C at once: ``R = C - Q Q'C``, ``q = R/|R|``; adding ``q`` changes the fitted values by
``q (q'r)`` and the leverages by ``q^2``, so every candidate's LOO residuals
``e_i / (1 - h_ii)`` cost a few vectorised passes over an n x m array. A candidate is
rank-deficient (skipped) when ``|R| <= 1e-7 |C|``, which is what interactions look like in a
one-attribute-at-a-time (L_max-I_1) sample.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from nimo.model.features import Term

RANK_TOL = 1e-7
ZERO_ERROR = 1e-9  # LOO MAPE (%) below which nothing is left to explain
SCREEN_TOL = 1e-12  # squared relative residual norm below which a column adds no rank
SCREEN = 16  # exact LOO for this many candidates per step on large problems
SCREEN_CELLS = 20000  # "large": n x (valid candidates) above this


@dataclass
class Candidate:
    term: Term
    column: np.ndarray


@dataclass
class GreedySearch:
    """Forward selection on response ``r`` (regression scale) with LOO MAPE on the original
    scale ``y = y_scale * r`` (``log_response``: ``y = y_scale * exp(r)``)."""

    r: np.ndarray
    y: np.ndarray
    weights: np.ndarray  # 1 / max(|y|, floor), see nimo.predictors.loo.mape
    y_scale: float
    log_response: bool = False
    terms: list[Term] = field(default_factory=list)
    path: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.r.size
        self.Q = np.full((n, 1), 1.0 / np.sqrt(n))
        self.fitted = np.full(n, self.r.mean())
        self.h = np.full(n, 1.0 / n)
        self.err = float(self._errors(self._loo_current()[:, None])[0])
        self.path.append(("1", self.err))

    # -- LOO errors ------------------------------------------------------------------
    def _loo_current(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            e = (self.r - self.fitted) / (1.0 - self.h)
        e[self.h > 1.0 - 1e-10] = np.inf
        return e

    def _errors(self, E: np.ndarray) -> np.ndarray:
        """LOO MAPE (%) per column of LOO residuals E (regression scale)."""
        n = E.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            if self.log_response:
                # y - y_scale*exp(r - e) = y * (1 - exp(-e))
                A = np.abs(np.expm1(-E)) * (self.weights * np.abs(self.y))[:, None]
            else:
                A = np.abs(E) * (self.weights * self.y_scale)[:, None]
            out = 100.0 * A.sum(axis=0) / n
        out[~np.isfinite(out)] = np.inf
        return out

    def evaluate(self, C: np.ndarray) -> np.ndarray:
        """LOO MAPE of the current design plus each single column of C (inf if invalid)."""
        if C.shape[1] == 0:
            return np.empty(0)
        R = C - self.Q @ (self.Q.T @ C)
        cn = np.sqrt(np.einsum("ij,ij->j", C, C))
        rn = np.sqrt(np.einsum("ij,ij->j", R, R))
        valid = rn > RANK_TOL * np.maximum(cn, 1e-300)
        Qn = R / np.where(valid, rn, 1.0)
        coef = Qn.T @ self.r
        e_old = self.r - self.fitted
        H = self.h[:, None] + Qn * Qn
        with np.errstate(divide="ignore", invalid="ignore"):
            E = (e_old[:, None] - Qn * coef) / (1.0 - H)
        E[H > 1.0 - 1e-10] = np.inf
        errs = self._errors(E)
        errs[~valid] = np.inf
        return errs

    def accept(self, cand: Candidate, err: float) -> None:
        c = cand.column
        for _ in range(2):  # Gram-Schmidt twice keeps Q orthonormal
            c = c - self.Q @ (self.Q.T @ c)
        q = c / np.linalg.norm(c)
        self.Q = np.column_stack([self.Q, q])
        self.fitted = self.fitted + q * (q @ self.r)
        self.h = self.h + q * q
        self.terms.append(cand.term)
        self.err = err
        self.path.append((cand.term.label, err))

    # -- the search ------------------------------------------------------------------
    def run(
        self,
        pool: list[Candidate],
        min_improvement: float,
        max_terms: int,
        interactions: bool,
        transforms_of: dict[str, list[str]] | None = None,
        columns: dict[str, np.ndarray] | None = None,
        pair_cache: dict[tuple[str, ...], np.ndarray] | None = None,
    ) -> list[Term]:
        """Add the best candidate while it cuts the LOO error by at least
        ``max(min_improvement, ln(m)/n)`` (m candidates evaluated, n samples).

        Interactions (products of the smooth transforms of two attributes already in the
        model) become candidates only when identifiable: not in the span of the intercept
        and all main-effect candidates of the two attributes (in an L_max-I_1 sample they
        never are).

        Large problems (n x m > SCREEN_CELLS) are screened: the exact LOO error is computed
        only for the ``SCREEN`` valid candidates that most reduce the residual sum of squares
        (from the running projections ``P = Q'C``, updated by one row per accepted term).
        """
        cands = list(pool)
        pair_cache = {} if pair_cache is None else pair_cache
        seen = {c.term.label for c in cands}
        mains: dict[str, list[np.ndarray]] = {}
        for c in cands:
            if not c.term.is_interaction:
                mains.setdefault(c.term.attrs[0], []).append(c.column)
        n = self.r.size
        C = np.column_stack([c.column for c in cands]) if cands else np.empty((n, 0))
        P = self.Q.T @ C
        cn2 = np.einsum("ij,ij->j", C, C)
        ct = C.T @ self.r
        alive = np.ones(len(cands), bool)
        while alive.any() and len(self.terms) < min(max_terms, n - 2) and self.err > ZERO_ERROR:
            qr = self.Q.T @ self.r
            rn2 = cn2 - np.einsum("ij,ij->j", P, P)
            ok = alive & (rn2 > SCREEN_TOL * np.maximum(cn2, 1e-300))
            idx = np.flatnonzero(ok)
            if idx.size == 0:
                break
            if n * idx.size > SCREEN_CELLS and idx.size > SCREEN:
                gain = (ct[idx] - qr @ P[:, idx]) ** 2 / rn2[idx]
                idx = idx[np.argpartition(-gain, SCREEN)[:SCREEN]]
            # selection-bias guard: the best of m pure-noise columns cuts the error by ~ln(m)/n
            need = max(min_improvement, np.log(max(idx.size, 1)) / n)
            errs = self.evaluate(C[:, idx])
            j = int(np.argmin(errs))
            if not errs[j] < self.err * (1.0 - need):
                break
            best = int(idx[j])
            alive[best] = False
            self.accept(cands[best], float(errs[j]))
            P = np.vstack([P, self.Q[:, -1] @ C])
            if interactions and columns is not None:
                new = [c for c in self._interactions(transforms_of or {}, columns)
                       if c.term.label not in seen and _identifiable(c, mains, pair_cache)]
                if new:
                    seen.update(c.term.label for c in new)
                    Cn = np.column_stack([c.column for c in new])
                    cands += new
                    C = np.column_stack([C, Cn])
                    P = np.column_stack([P, self.Q.T @ Cn])
                    cn2 = np.concatenate([cn2, np.einsum("ij,ij->j", Cn, Cn)])
                    ct = np.concatenate([ct, Cn.T @ self.r])
                    alive = np.concatenate([alive, np.ones(len(new), bool)])
        return list(self.terms)

    def _interactions(
        self, transforms_of: dict[str, list[str]], columns: dict[str, np.ndarray]
    ) -> Iterable[Candidate]:
        """Products of the smooth transforms of every pair of attributes already in the model
        (hierarchy: both main effects first); hinge-only attributes contribute ``identity``."""
        from nimo.model.features import Factor

        chosen: dict[str, list[str]] = {}
        for t in self.terms:
            if not t.is_interaction:
                f = t.factors[0]
                chosen.setdefault(f.attr, [])
                if f.knot is None and f.transform not in chosen[f.attr]:
                    chosen[f.attr].append(f.transform)
        attrs = list(chosen)
        for i, a in enumerate(attrs):
            for b in attrs[i + 1:]:
                ta = chosen[a] or ["identity"]
                tb = chosen[b] or ["identity"]
                combos = {(x, y) for x in ta for y in tb} | {("identity", "identity")}
                for x, y in sorted(combos):
                    if x not in transforms_of.get(a, ()) or y not in transforms_of.get(b, ()):
                        continue
                    term = Term.interaction(Factor(a, x), Factor(b, y))
                    yield Candidate(term, term.evaluate(columns))


def _identifiable(
    cand: Candidate, mains: dict[str, list[np.ndarray]], cache: dict[tuple[str, ...], np.ndarray]
) -> bool:
    """Whether an interaction column adds rank to [1, all main candidates of its attributes].

    The orthonormal basis of that span is cached per attribute pair (``cache``, shareable
    between the identity- and log-response searches, which use the same columns).
    """
    c = cand.column
    key = cand.term.attrs
    U = cache.get(key)
    if U is None:
        B = np.column_stack([np.ones_like(c)] + [col for a in key for col in mains.get(a, [])])
        U, sv, _ = np.linalg.svd(B, full_matrices=False)
        U = U[:, sv > 1e-10 * sv[0]]
        cache[key] = U
    res = c - U @ (U.T @ c)
    return bool(np.linalg.norm(res) > RANK_TOL * 10 * np.linalg.norm(c))
