"""Hinges of a capacity over a load (``predictors.load_ratios``).

A working set that grows with the input moves a memory cliff: below ``mem = c * input`` the
application spills, merges or swaps, so the edge is a level of ``mem / input``, not of
``mem``. A hinge at one memory level (the main-effect candidates) fits one input size; a
hinge of the ratio ``max(0, k - z_cap / z_load)`` fits them all. Only this direction is
offered: it is bounded (by ``k``, the ratio being positive), so it cannot blow up where the
model extrapolates, and a capacity beyond the edge changes nothing, as beyond a cliff.
They are offered, like interactions, once the capacity has a main effect (the cliff shows
there first) and the load is an attribute of the predictor, at up to ``RATIO_KNOTS``
observed ratios spread over the interior ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from nimo.model.features import Factor, Term
from nimo.space import Attribute

RATIO_KNOTS = 5


def load_ratio_pairs(attributes: Sequence[Attribute]) -> list[tuple[str, str]]:
    """(capacity, load) pairs of numeric attributes: more capacity is faster, more load is
    more work."""
    numeric = [a for a in attributes if not a.categories]
    return [(c.name, ld.name) for c in numeric if c.direction > 0 and not c.load
            for ld in numeric if ld.load]


def ratio_candidates(
    terms: Sequence[Term],
    pairs: Sequence[tuple[str, str]],
    columns: Mapping[str, np.ndarray],
    done: set[tuple[str, str]],
) -> Iterable[tuple[Term, np.ndarray]]:
    """(term, column) for the ratio hinges of each pair whose capacity has a main effect in
    ``terms`` and whose load is among ``columns``; pairs in ``done`` are skipped (and
    added)."""
    present = {t.attrs[0] for t in terms if not t.is_interaction and not t.is_ratio}
    for cap, load in pairs:
        if cap in present and load in columns and (cap, load) not in done:
            done.add((cap, load))
            for term in _hinges(cap, load, columns):
                yield term, term.evaluate(columns)


def _hinges(cap: str, load: str, columns: Mapping[str, np.ndarray]) -> list[Term]:
    if np.unique(columns[load]).size < 2:
        return []
    inner = np.unique(columns[cap] / columns[load])[1:-1]
    if inner.size == 0:
        return []
    picks = np.unique(np.round(np.linspace(0, inner.size - 1, min(RATIO_KNOTS, inner.size))))
    return [Term((Factor(cap, "piecewise_below", float(inner[int(i)]), over=load),))
            for i in picks]
