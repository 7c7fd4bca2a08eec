"""Pairwise interaction candidates, offered only where the sample can identify them.

An interaction of attributes a and b is identifiable only if some function of (a, b) is not
*additive* (``g(a) + h(b)``) on the observed cells (distinct (a, b) pairs). With hinges at
all interior levels, the main-effect candidates of an attribute span every function of its
level, so a product column that is additive on the cells would only duplicate main effects.
In an L_max-I_1 (one-at-a-time) sample every function of (a, b) is additive: no interaction
is offered there. The test runs on the few distinct cells, not on the n rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from nimo.model.features import Factor, Term

ADDITIVE_TOL = 1e-6


def _additive_basis(za: np.ndarray, zb: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(distinct cells, orthonormal basis of additive functions on them), or None when every
    function of the cells is additive (nothing identifiable)."""
    cells = np.unique(np.column_stack([za, zb]), axis=0)
    la, ia = np.unique(cells[:, 0], return_inverse=True)
    lb, ib = np.unique(cells[:, 1], return_inverse=True)
    # the additive functions span len(la) + len(lb) - (connected components of the cells'
    # level graph) dimensions; a forest leaves none beyond them (every level distinct, say)
    levels = len(la) + len(lb)
    graph = coo_matrix((np.ones(len(cells)), (ia, len(la) + ib)), shape=(levels, levels))
    if levels - connected_components(graph, directed=False)[0] >= len(cells):
        return None
    M = np.zeros((len(cells), len(la) + len(lb)))
    M[np.arange(len(cells)), ia] = 1.0
    M[np.arange(len(cells)), len(la) + ib] = 1.0
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    U = U[:, s > 1e-10 * s[0]]
    if U.shape[1] >= len(cells):
        return None
    return cells, U


def main_attributes(terms: Sequence[Term]) -> list[str]:
    """The attributes with a main effect in ``terms``, in the order they joined."""
    attrs: list[str] = []
    for t in terms:
        if not t.is_interaction and not t.is_ratio and t.attrs[0] not in attrs:
            attrs.append(t.attrs[0])
    return attrs


def interaction_candidates(
    terms: Sequence[Term],
    transforms_of: Mapping[str, Sequence[str]],
    columns: Mapping[str, np.ndarray],
    cache: dict[tuple[str, str], list[tuple[Term, np.ndarray]]],
    done: set[tuple[str, str]],
) -> Iterable[tuple[Term, np.ndarray]]:
    """(term, column) for products ``f(a) * g(b)`` of the smooth transforms allowed for each
    pair of attributes that both have a main effect in ``terms`` (hierarchy), when the product
    is not additive on the observed cells. Pairs in ``done`` are skipped (and added);
    ``cache`` keeps each pair's candidates (shareable between searches on the same X)."""
    attrs = main_attributes(terms)
    for i, a in enumerate(attrs):
        for b in attrs[i + 1:]:
            key = (a, b) if (b, a) not in cache else (b, a)
            if key in done:
                continue
            done.add(key)
            if key not in cache:
                cache[key] = list(_pair_candidates(a, b, transforms_of, columns))
            yield from cache[key]


def _pair_candidates(
    a: str, b: str, transforms_of: Mapping[str, Sequence[str]], columns: Mapping[str, np.ndarray]
) -> Iterable[tuple[Term, np.ndarray]]:
    basis = _additive_basis(columns[a], columns[b])
    if basis is None:
        return
    cells, U = basis
    for x in transforms_of.get(a, ("identity",)):
        for y in transforms_of.get(b, ("identity",)):
            fa, fb = Factor(a, x), Factor(b, y)
            v = fa.evaluate(cells[:, 0]) * fb.evaluate(cells[:, 1])
            res = v - U @ (U.T @ v)
            if np.linalg.norm(res) > ADDITIVE_TOL * np.linalg.norm(v):
                term = Term.interaction(fa, fb)
                yield term, term.evaluate(columns)
