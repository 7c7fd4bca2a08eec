"""A power-law start for the term search (``predictors.power_first``): on log y, first the
log of each attribute (``log y = c + sum b_i log x_i``: a run time that scales as a power of
its clock, CPU share or input), chosen among those few terms alone, then the search goes on
over every candidate.

The greedy search over every transform and hinge takes, at small samples, the single term
that explains most (often a hinge), and its selection-bias guard (a new term must cut the
error by ``ln(m)/n`` of m candidates) then blocks the terms that would complete a product of
powers: tuning gen649 (o_a = c mhz^-0.73 / share) kept a hinge of the share at 18-24%
leave-one-out error over 12-19 runs, where the power law read 2%. Among the power terms
alone m is the attribute count, so the guard is small."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from nimo.model.features import Term
from nimo.predictors.options import PredictorOptions
from nimo.predictors.select import Candidate, GreedySearch

Found = tuple[float, list[Term], list[tuple[str, float]]]  # (LOO error, terms, path)


def power_first(pool: Sequence[Candidate], r_log: np.ndarray, y: np.ndarray,
                weights: np.ndarray, y_scale: float, opts: PredictorOptions,
                smooth: dict[str, list[str]], columns: Mapping[str, np.ndarray],
                cache: dict, ratio_pairs: Sequence[tuple[str, str]] = ()) -> Found | None:
    """The search on log y that starts among the log main effects of ``pool`` (None when
    there is none)."""
    powers = [c for c in pool if len(c.term.factors) == 1
              and c.term.factors[0].transform == "log" and c.term.factors[0].knot is None]
    if not powers:
        return None
    search = GreedySearch(r=r_log, y=y, weights=weights, y_scale=y_scale, log_response=True)
    search.run(list(powers), opts.min_improvement, opts.max_terms, False)
    if opts.power_log_log:  # stay a product of powers: log x and log x * log z terms only
        search.run(list(powers), opts.min_improvement, opts.max_terms, opts.interactions,
                   log_pairs(smooth), dict(columns), {}, None, None, (), opts.lookahead)
        return search.err, list(search.terms), list(search.path)
    search.run(list(pool), opts.min_improvement, opts.max_terms, opts.interactions, smooth,
               dict(columns), cache, None, None, ratio_pairs, opts.lookahead)
    return search.err, list(search.terms), list(search.path)


def log_pairs(smooth: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The transforms an interaction on log y may take: log alone (a product of powers);
    an identity or reciprocal factor there is exp(b x z), which a corner of levels no run
    combined can take 100 times off (tuning gen919). Used by ``power_log_log`` and
    ``log_pairs``."""
    return {a: ["log"] for a, ts in smooth.items() if "log" in ts}
