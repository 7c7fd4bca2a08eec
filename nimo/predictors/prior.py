"""Physically motivated forms where the sample is too small to choose one (``physical``).

An attribute's *physical transform* follows its direction (:class:`nimo.space.Attribute`):
a capacity (more = faster: CPU speed, nodes, bandwidth) acts through its reciprocal, time ~
a + b / x (a fixed part plus work shared by the capacity, Amdahl's law); a load (input size,
iterations) or a latency acts through its identity, time ~ a + b x. Categorical attributes
have none (:data:`CATEGORY`).

Two uses, both only where the data cannot decide:

- :func:`physical_tiebreak`: the greedy selection's candidates whose LOO errors tie (an
  attribute seen at two levels makes identity, reciprocal and log fit the sample identically)
  go to the physical transform instead of the first in the list.
- :func:`two_point_prior`: two samples leave no degree of freedom to validate a term, so the
  selection keeps the constant, the mean of the two runs, whatever the attributes. When the
  two differ in exactly one attribute, the physical form through both points is used instead;
  if it would predict a time <= 0 at some level (a capacity whose time falls faster than
  1/x), the power law ``log y = a + b log x``, which stays positive, takes its place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from nimo.model.features import Term
from nimo.space import Attribute

TIE_TOL = 1e-9  # relative: LOO errors this close are the same error


def first_best(errs: np.ndarray) -> int:
    """Index of the lowest error, the first in order among those that tie with it (within
    ``TIE_TOL``). Errors equal in exact arithmetic (an attribute at two levels fits identity,
    reciprocal and log alike) differ in their last bits between CPUs and BLAS kernels;
    ``argmin`` alone would take whichever the rounding favours there."""
    finite = np.isfinite(errs)
    if not finite.any():
        return int(np.argmin(errs))
    return int(tied_with(errs, float(np.min(errs[finite])))[0])


def tied_with(errs: np.ndarray, value: float) -> np.ndarray:
    """Indices of the errors that tie with ``value`` or lie below it (within ``TIE_TOL``)."""
    return np.flatnonzero(errs <= value * (1.0 + TIE_TOL) + 1e-12)


CATEGORY = "category"  # not a transform: the attribute's levels are names, see fit_predictor


def physical_transforms(attributes: Sequence[Attribute]) -> dict[str, str]:
    """{attribute name: physical transform}: ``reciprocal`` for capacities, ``identity`` for
    loads and latencies, :data:`CATEGORY` for categorical attributes (their codes are names,
    not quantities: the predictors give each level its own indicator term)."""
    return {a.name: CATEGORY if a.categories else
            "reciprocal" if a.direction > 0 else "identity" for a in attributes}


def physical_tiebreak(terms: Sequence[Term], errs: np.ndarray, best: int,
                      preferred: Mapping[str, str]) -> int:
    """Index among ``terms`` to accept: ``best`` unless another candidate ties with it (LOO
    error within ``TIE_TOL``) and is a main term in its attribute's physical transform."""
    if not preferred or not np.isfinite(errs[best]):
        return best
    ties = tied_with(errs, float(errs[best]))
    if ties.size < 2 or _is_physical(terms[best], preferred):
        return best
    for j in ties:
        if _is_physical(terms[int(j)], preferred):
            return int(j)
    return best


def _is_physical(term: Term, preferred: Mapping[str, str]) -> bool:
    f = term.factors[0]
    return not term.is_interaction and preferred.get(f.attr) == f.transform


def two_point_prior(columns: Mapping[str, np.ndarray], norm_levels: Mapping[str, np.ndarray],
                    r: np.ndarray, preferred: Mapping[str, str]
                    ) -> tuple[str, list[Term]] | None:
    """(response, terms) of the physical form through two samples ``r`` (target on the
    regression scale, positive) that differ in exactly one attribute with a physical
    transform; None where there is no such attribute (the constant stays)."""
    if r.size != 2:
        return None
    varied = [a for a, z in columns.items() if z[0] != z[1]]
    if len(varied) != 1 or varied[0] not in preferred:
        return None
    a = varied[0]
    z, levels = columns[a], np.asarray(norm_levels[a], float)
    positive = bool(np.all(z > 0) and np.all(levels > 0))
    form = preferred[a]
    if form == "reciprocal" and not positive:
        form = "identity"
    g, g_lv = _transform(form, z), _transform(form, levels)
    slope = (r[1] - r[0]) / (g[1] - g[0])
    if np.all(r[0] + slope * (g_lv - g[0]) > 0):
        return "identity", [Term.main(a, form)]
    if positive and np.all(r > 0):
        return "log", [Term.main(a, "log")]
    return None


def _transform(form: str, z: np.ndarray) -> np.ndarray:
    return 1.0 / z if form == "reciprocal" else z
