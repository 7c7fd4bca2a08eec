"""Greedy forward selection of regression terms by closed-form leave-one-out error.

The current design is kept as an orthonormal basis Q (intercept first). For all candidate
columns C at once: ``R = C - Q Q'C``, ``q = R/|R|``; adding ``q`` changes the fitted values by
``q (q'r)`` and the leverages by ``q^2``, so every candidate's LOO residuals
``e_i / (1 - h_ii)`` cost a few vectorised passes over an n x m array. A candidate that adds
no rank (``|R| <= 1e-6 |C|``, e.g. a column already spanned) is skipped. Interactions are
offered only where the sample identifies them (:mod:`nimo.predictors.interactions`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nimo.model.features import Term
from nimo.predictors.interactions import interaction_candidates, main_attributes
from nimo.predictors.prior import first_best, physical_tiebreak
from nimo.predictors.ratios import ratio_candidates

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
    # weighted least squares: row i of the design and the response multiplied by
    # row_scale[i] (None: ordinary least squares); Q, fitted and h are on that scale
    row_scale: np.ndarray | None = None
    terms: list[Term] = field(default_factory=list)
    path: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.r.size
        self.s = np.ones(n) if self.row_scale is None else np.asarray(self.row_scale, float)
        self.rs = self.r * self.s
        if self.row_scale is None:
            self.Q = np.full((n, 1), 1.0 / np.sqrt(n))
            self.fitted = np.full(n, self.r.mean())
            self.h = np.full(n, 1.0 / n)
        else:
            self.Q = (self.s / np.linalg.norm(self.s))[:, None]
            self.fitted = self.Q[:, 0] * (self.Q[:, 0] @ self.rs)
            self.h = self.Q[:, 0] ** 2
        self.err = float(self._errors(self._loo_current()[:, None])[0])
        self.path.append(("1", self.err))

    # -- LOO errors ------------------------------------------------------------------
    def _loo_current(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            e = (self.rs - self.fitted) / (1.0 - self.h)
        e[self.h > 1.0 - 1e-10] = np.inf
        return e

    def _errors(self, E: np.ndarray) -> np.ndarray:
        """LOO MAPE (%) per column of LOO residuals E (on the rows' scale)."""
        n = E.shape[0]
        if self.row_scale is not None:
            E = E / self.s[:, None]
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
        return self._evaluate(self.on_rows(C))

    def on_rows(self, C: np.ndarray) -> np.ndarray:
        """Columns C on the rows' scale."""
        return C if self.row_scale is None else C * self.s[:, None]

    def _evaluate(self, C: np.ndarray) -> np.ndarray:
        """``evaluate`` of columns already on the rows' scale."""
        if C.shape[1] == 0:
            return np.empty(0)
        R = C - self.Q @ (self.Q.T @ C)
        cn = np.sqrt(np.einsum("ij,ij->j", C, C))
        rn = np.sqrt(np.einsum("ij,ij->j", R, R))
        valid = rn > RANK_TOL * np.maximum(cn, 1e-300)
        Qn = R / np.where(valid, rn, 1.0)
        coef = Qn.T @ self.rs
        e_old = self.rs - self.fitted
        H = self.h[:, None] + Qn * Qn
        with np.errstate(divide="ignore", invalid="ignore"):
            E = (e_old[:, None] - Qn * coef) / (1.0 - H)
        E[H > 1.0 - 1e-10] = np.inf
        errs = self._errors(E)
        errs[~valid] = np.inf
        return errs

    def accept(self, cand: Candidate, err: float) -> None:
        c = self.on_rows(cand.column[:, None])[:, 0]
        for _ in range(2):  # Gram-Schmidt twice keeps Q orthonormal
            c = c - self.Q @ (self.Q.T @ c)
        q = c / np.linalg.norm(c)
        self.Q = np.column_stack([self.Q, q])
        self.fitted = self.fitted + q * (q @ self.rs)
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
        pair_cache: dict | None = None,
        matrix: np.ndarray | None = None,
        preferred: Mapping[str, str] | None = None,
        ratio_pairs: Sequence[tuple[str, str]] = (),
        lookahead: bool = False,
    ) -> list[Term]:
        """Add the best candidate while it cuts the LOO error by at least
        ``max(min_improvement, ln(m)/n)`` (m candidates evaluated, n samples).

        Interactions (products of the smooth transforms of two attributes already in the
        model) become candidates only when identifiable, see
        :mod:`nimo.predictors.interactions` (in an L_max-I_1 sample they never are).

        Large problems (n x m > SCREEN_CELLS) are screened: the exact LOO error is computed
        only for the ``SCREEN`` valid candidates that most reduce the residual sum of squares
        (from the running projections ``P = Q'C``, updated by one row per accepted term).
        ``matrix`` may hold the pool's columns already stacked (shared between searches).
        ``preferred`` ({attribute: physical transform}) breaks exact ties of the LOO error,
        see :func:`nimo.predictors.prior.physical_tiebreak`. ``ratio_pairs`` (capacity,
        load): their ratio hinges join once the capacity is in, see
        :mod:`nimo.predictors.ratios`. ``lookahead``: when no single candidate passes, a
        main effect of an attribute not yet in the model together with an interaction it
        unlocks is accepted if the pair cuts the error by ``(1 - need)^2``, as two single
        terms would have to (:meth:`_unlock`).
        """
        cands = _Pool.build(pool, self.Q, self.rs, matrix, self.row_scale)
        offers = _Offers(columns, transforms_of or {}, {} if pair_cache is None else pair_cache,
                         interactions, ratio_pairs)
        n = self.r.size
        while (cands.alive.any() and len(self.terms) < min(max_terms, n - 2)
               and self.err > ZERO_ERROR):
            idx = self._screened(cands)
            if idx.size == 0:
                break
            # selection-bias guard: the best of m pure-noise columns cuts the error by ~ln(m)/n
            need = max(min_improvement, np.log(max(idx.size, 1)) / n)
            errs = self._evaluate(cands.C[:, idx])
            j = first_best(errs)
            if preferred:
                j = physical_tiebreak([cands.cands[int(i)].term for i in idx], errs, j,
                                      preferred)
            if errs[j] < self.err * (1.0 - need):
                self._take(cands, offers, int(idx[j]), float(errs[j]))
                continue
            pair = self._unlock(cands, offers, idx, errs, need, max_terms) if lookahead else None
            if pair is None:
                break
            self._take(cands, offers, pair[0], pair[1])
            self._take(cands, offers, cands.index(pair[2]), pair[3])
        return list(self.terms)

    def _take(self, cands: _Pool, offers: _Offers, i: int, err: float) -> None:
        """Accept candidate ``i`` and offer what it unlocks."""
        cands.alive[i] = False
        self.accept(cands.cands[i], err)
        cands.project(self.Q[:, -1])
        new = offers.new(self.terms, cands.seen)
        if new:
            cands.extend(new, self.Q, self.rs)

    def _unlock(self, cands: _Pool, offers: _Offers, idx: np.ndarray, errs: np.ndarray,
                need: float, max_terms: int) -> tuple[int, float, Term, float] | None:
        """(first, its error, second, the pair's error) for the best pair of a main effect
        of an attribute not in the model (among the evaluated ``idx``) and an interaction
        it unlocks, if the pair cuts the error by ``(1 - need)^2``; None otherwise. A
        memory cliff that moves with the input: memory alone barely helps, memory with
        memory x input does (tuning gen23: o_d stuck at 27% LOO for 20 runs). Only with
        room for two more terms."""
        if len(self.terms) + 2 > min(max_terms, self.r.size - 2):
            return None
        inside = set(main_attributes(self.terms))
        bar, found = self.err * (1.0 - need) ** 2, None
        for i, e1 in zip(idx, errs, strict=True):
            term = cands.cands[int(i)].term
            if term.is_interaction or term.is_ratio or term.attrs[0] in inside \
                    or not np.isfinite(e1):
                continue
            trial = copy.copy(self)
            trial.terms, trial.path = list(self.terms), list(self.path)
            trial.accept(cands.cands[int(i)], float(e1))
            new = offers.peek(trial.terms, cands.seen)
            if not new:
                continue
            e2 = trial.evaluate(np.column_stack([c.column for c in new]))
            k = first_best(e2)
            if e2[k] < bar:
                bar, found = float(e2[k]), (int(i), float(e1), new[k].term, float(e2[k]))
        return found

    def _screened(self, cands: _Pool) -> np.ndarray:
        """Indices of the candidates to evaluate exactly: the live ones that add rank, on
        large problems only the ``SCREEN`` that most reduce the residual sum of squares."""
        rn2 = cands.cn2 - np.einsum("ij,ij->j", cands.P, cands.P)
        ok = cands.alive & (rn2 > SCREEN_TOL * np.maximum(cands.cn2, 1e-300))
        idx = np.flatnonzero(ok)
        if self.r.size * idx.size > SCREEN_CELLS and idx.size > SCREEN:
            qr = self.Q.T @ self.rs
            gain = (cands.ct[idx] - qr @ cands.P[:, idx]) ** 2 / rn2[idx]
            idx = np.sort(idx[np.argpartition(-gain, SCREEN)[:SCREEN]])
        return idx


@dataclass
class _Offers:
    """Candidates offered as the model grows: identifiable interactions of the attributes
    in it, ratio hinges of the capacities in it over loads (``pairs``: shared between
    searches on the same X; ``done``: the pairs offered so far in this search)."""

    columns: dict[str, np.ndarray] | None
    transforms_of: dict[str, list[str]]
    pairs: dict
    interactions: bool
    ratio_pairs: Sequence[tuple[str, str]]
    done: set[tuple[str, str]] = field(default_factory=set)
    ratios_done: set[tuple[str, str]] = field(default_factory=set)

    def new(self, terms: list[Term], seen: set[Term]) -> list[Candidate]:
        if self.columns is None:
            return []
        found: list[tuple[Term, np.ndarray]] = []
        if self.interactions:
            found += interaction_candidates(terms, self.transforms_of, self.columns,
                                            self.pairs, self.done)
        if self.ratio_pairs:
            found += ratio_candidates(terms, self.ratio_pairs, self.columns, self.ratios_done)
        return [Candidate(t, col) for t, col in found if t not in seen]

    def peek(self, terms: list[Term], seen: set[Term]) -> list[Candidate]:
        """The interactions ``new`` would offer for ``terms``, leaving the offers as they
        are."""
        if self.columns is None or not self.interactions:
            return []
        found = interaction_candidates(terms, self.transforms_of, self.columns, self.pairs,
                                       set(self.done))
        return [Candidate(t, col) for t, col in found if t not in seen]


@dataclass
class _Pool:
    """The candidates' columns in a buffer with spare room for interactions (the first
    ``m`` are in use), with their running projections ``P = Q'C``, squared norms ``cn2``,
    ``C'r`` and which are still ``alive`` (not yet accepted)."""

    cands: list[Candidate]
    C: np.ndarray  # on the rows' scale
    m: int
    P: np.ndarray
    cn2: np.ndarray
    ct: np.ndarray
    alive: np.ndarray
    seen: set[Term]
    row_scale: np.ndarray | None = None

    @classmethod
    def build(cls, pool: list[Candidate], Q: np.ndarray, r: np.ndarray,
              matrix: np.ndarray | None, row_scale: np.ndarray | None = None) -> _Pool:
        """The pool on the rows' scale (``r`` is already on it)."""
        cands = list(pool)
        m = len(cands)
        C = np.empty((r.size, m + 64))
        if m:
            C[:, :m] = matrix if matrix is not None else np.column_stack([c.column for c in cands])
            if row_scale is not None:
                C[:, :m] *= row_scale[:, None]
        used = C[:, :m]
        return cls(cands, C, m, Q.T @ used, np.einsum("ij,ij->j", used, used), used.T @ r,
                   np.ones(m, bool), {c.term for c in cands}, row_scale)

    def index(self, term: Term) -> int:
        """Where ``term`` sits among the candidates."""
        return next(i for i, c in enumerate(self.cands) if c.term == term)

    def project(self, q: np.ndarray) -> None:
        """A new basis vector ``q`` joined Q: one more row of projections."""
        self.P = np.vstack([self.P, q @ self.C[:, :self.m]])

    def extend(self, new: list[Candidate], Q: np.ndarray, r: np.ndarray) -> None:
        """Append new candidates (interactions) to the buffer, growing it when full."""
        self.seen.update(c.term for c in new)
        k, m = len(new), self.m
        if m + k > self.C.shape[1]:
            self.C = np.concatenate([self.C, np.empty((r.size, m + k))], axis=1)
        Cn = self.C[:, m:m + k]
        for i, c in enumerate(new):
            Cn[:, i] = c.column
        if self.row_scale is not None:
            Cn *= self.row_scale[:, None]
        self.cands += new
        self.m = m + k
        self.P = np.column_stack([self.P, Q.T @ Cn])
        self.cn2 = np.concatenate([self.cn2, np.einsum("ij,ij->j", Cn, Cn)])
        self.ct = np.concatenate([self.ct, Cn.T @ r])
        self.alive = np.concatenate([self.alive, np.ones(k, bool)])
