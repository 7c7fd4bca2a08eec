"""Fit one predictor function (Algorithm 6, with transform/interaction selection).

Normalisation (Algorithm 6 step 3): ``z_j = x_j / s_j`` with ``s_j = x_j,ref`` when positive,
else the largest absolute level (a latency whose reference is 0 maps onto [0, 1]); see
:func:`nimo.model.features.attribute_scale`. The target is divided by ``y_ref`` unless that
is ~0 (occupancies such as o_d can be 0): then by mean |y|, or 1 if all y are 0.

``mode='paper'``: one term per active attribute, identity or reciprocal by LOO error.
``mode='auto'``: greedy forward selection (:mod:`nimo.predictors.select`) from the intercept
over identity/reciprocal/log of each active attribute with >= 2 observed levels, hinges
``max(0, z-k)`` and ``max(0, k-z)`` at each interior observed level k (at most
``MAX_KNOTS``, spread over the levels, for an attribute measured at many), and identifiable
pairwise products of smooth transforms once both attributes are in; a term must cut the
closed-form LOO MAPE by ``max(min_improvement, ln(m)/n)`` (with ``lookahead``, a main effect
and an interaction it unlocks may join as a pair). The same search on ``log y``
wins only if its LOO MAPE is lower by ``min_improvement``. The final OLS fit (statsmodels)
gives params, ``cov_params`` and the residual variance. The stored ``loo_mape`` is the LOO of
the chosen design: the selection itself is not cross-validated, so it is optimistic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from nimo.errors import DataError
from nimo.finite import finite_or_none
from nimo.metrics import fit_error_weights
from nimo.model.features import KNOTTED, Term, attribute_scale, design_matrix
from nimo.model.predictor import TARGETS, FittedPredictor, relative_rows
from nimo.predictors.loo import loo_mape
from nimo.predictors.options import PredictorOptions
from nimo.predictors.power import log_pairs, power_first
from nimo.predictors.prior import CATEGORY, first_best, two_point_prior
from nimo.predictors.select import Candidate, GreedySearch
from nimo.predictors.variance import CONSTANT, RELATIVE, relative_noise

__all__ = ["PredictorOptions", "fit_predictor"]

# An attribute measured at more levels (continuous values in a CSV for ``nimo model fit``)
# offers hinges and steps at this many of them, evenly spread: one per level made a
# candidate matrix of runs x levels (9,200 runs: tens of GB). Grids have far fewer levels.
MAX_KNOTS = 48


def spread_levels(levels: np.ndarray, most: int = MAX_KNOTS) -> np.ndarray:
    """``levels`` when at most ``most``, else ``most`` of them evenly spread (by rank; the
    first and last kept)."""
    if levels.size <= most:
        return levels
    return levels[np.unique(np.linspace(0, levels.size - 1, most).round().astype(int))]


def fit_predictor(
    target: str,
    X: np.ndarray,
    y: np.ndarray,
    attribute_names: Sequence[str],
    active: Sequence[str],
    reference: Sequence[float],
    y_ref: float,
    levels: Mapping[str, Sequence[float]],
    options: PredictorOptions | None = None,
    physical: Mapping[str, str] | None = None,
    structure: tuple[str, Sequence[Term]] | None = None,
    ratios: Sequence[tuple[str, str]] = (),
    error_scale: np.ndarray | None = None,
) -> FittedPredictor:
    """Fit ``target`` on the ``active`` attributes from samples (X: n x k over ALL attributes
    in ``attribute_names`` order, y: n). See :class:`PredictorOptions` for the modes.
    ``structure`` (response, terms): fit those instead of selecting them (a previous fit's
    form refitted on new samples, see ``PredictorOptions.sticky``).
    ``physical``: {attribute: physical transform} (:mod:`nimo.predictors.prior`), used when
    ``options.physical`` in auto mode; an attribute marked ``category`` there is categorical
    (its levels are codes of names): auto mode offers one ``level`` indicator per observed
    level instead of transforms of the code. ``ratios`` (capacity, load) pairs: with
    ``options.load_ratios``, the hinges of their ratio (:mod:`nimo.predictors.ratios`).
    ``error_scale`` (one value per sample): the selection and the LOO error judge each
    sample's error relative to it instead of to y (``options.share_errors``)."""
    opts, names = options or PredictorOptions(), tuple(attribute_names)
    X = np.atleast_2d(np.asarray(X, dtype=float))
    y = np.asarray(y, dtype=float).reshape(-1)
    _check_inputs(target, X, y, names, active, reference)
    data = _Normalised.of(X, y, names, list(dict.fromkeys(active)), reference, y_ref, levels)
    categorical = frozenset(a for a, t in (physical or {}).items() if t == CATEGORY)
    preferred = ({a: t for a, t in (physical or {}).items() if t != CATEGORY}
                 if opts.physical and opts.mode == "auto" else {})
    if structure is not None:
        response, terms = structure[0], list(structure[1])
        path: list[tuple[str, float]] = []
    else:
        pairs = [(c, ld) for c, ld in ratios if c in data.columns and ld in data.columns
                 ] if opts.load_ratios else []
        weights = fit_error_weights(y if error_scale is None else error_scale)
        response, terms, path = _select_terms(data, y, weights, opts, preferred, categorical,
                                              pairs)
    r = y / data.y_scale if response == "identity" else np.log(y / data.y_scale)
    A = design_matrix(terms, data.Z, data.active)
    rows = relative_rows(y, data.y_scale) if opts.weighted and response == "identity" else None
    params, cov, resid_var, variance, dof = _final_fit_with_noise(A, r, response, opts, rows)
    used = [a for a in data.active if any(a in t.attrs for t in terms)]
    pred = FittedPredictor(
        target=target, attribute_names=names, attributes=tuple(used),
        reference=tuple(float(reference[names.index(a)]) for a in used),
        scale=tuple(data.scales[data.active.index(a)] for a in used),
        y_ref=float(y_ref), y_scale=data.y_scale, response=response, terms=tuple(terms),
        params=params, cov=cov, resid_var=resid_var, variance=variance, dof=dof,
        n_train=int(y.size), weighted=rows is not None,
        info={"mode": opts.mode, "active": list(data.active),
              "path": [[label, round(e, 6)] for label, e in path],
              **({"kept": True} if structure is not None else {})},
    )
    return _with_loo(pred, X, y, error_scale)


def _with_loo(pred: FittedPredictor, X: np.ndarray, y: np.ndarray,
              error_scale: np.ndarray | None) -> FittedPredictor:
    """``pred`` with its closed-form LOO error (relative to ``error_scale`` when given)."""
    if y.size < 2:
        return pred
    return dataclasses.replace(pred, loo_mape=finite_or_none(loo_mape(pred, X, y, error_scale)))


def _check_inputs(target: str, X: np.ndarray, y: np.ndarray, names: tuple[str, ...],
                  active: Sequence[str], reference: Sequence[float]) -> None:
    if target not in TARGETS:
        raise DataError(f"unknown target {target!r}", hint="valid: " + ", ".join(TARGETS))
    if X.shape != (y.size, len(names)) or len(reference) != len(names):
        raise DataError(f"fit_predictor({target}): X is {X.shape}, y has {y.size} values, "
                        f"{len(names)} attributes, {len(reference)} reference values")
    if y.size == 0:
        raise DataError(f"fit_predictor({target}): no samples")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise DataError(f"fit_predictor({target}): non-finite values in the samples")
    unknown = [a for a in active if a not in names]
    if unknown:
        raise DataError(f"fit_predictor({target}): unknown attribute {unknown[0]!r}",
                        hint="valid: " + ", ".join(names))


@dataclasses.dataclass
class _Normalised:
    """The active attributes' columns divided by their scales (``Z``, and by name in
    ``columns``), their levels on that scale, and the divisor of the target."""

    active: list[str]
    scales: list[float]
    Z: np.ndarray
    columns: dict[str, np.ndarray]
    norm_levels: dict[str, np.ndarray]
    y_scale: float

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray, names: tuple[str, ...], active: list[str],
           reference: Sequence[float], y_ref: float, levels: Mapping[str, Sequence[float]]
           ) -> _Normalised:
        idx = [names.index(a) for a in active]
        scales = [attribute_scale(float(reference[i]), levels.get(a, ()))
                  for a, i in zip(active, idx, strict=True)]
        Z = X[:, idx] / np.asarray(scales) if idx else np.empty((y.size, 0))
        columns = {a: Z[:, j] for j, a in enumerate(active)}
        norm_levels = {a: _levels(levels.get(a), X[:, i]) / s
                       for a, i, s in zip(active, idx, scales, strict=True)}
        return cls(active, scales, Z, columns, norm_levels, _y_scale(float(y_ref), y))


def _select_terms(data: _Normalised, y: np.ndarray, weights: np.ndarray,
                  opts: PredictorOptions, preferred: Mapping[str, str],
                  categorical: frozenset[str] = frozenset(),
                  ratio_pairs: Sequence[tuple[str, str]] = ()
                  ) -> tuple[str, list[Term], list[tuple[str, float]]]:
    """(response, terms, selection path): the search on y, and in auto mode also on log y,
    which must beat it by ``min_improvement`` (prefer simple). With ``preferred``, two
    samples get the physical two-point form (:func:`two_point_prior`)."""
    runs = [("identity", y / data.y_scale)]
    rows = relative_rows(y, data.y_scale) if opts.weighted else None
    if opts.mode == "auto" and opts.log_response and np.all(y > 0):
        runs.append(("log", np.log(y / data.y_scale)))
    pool: list[Candidate] = []
    smooth: dict[str, list[str]] = {}
    matrix = None
    if opts.mode == "auto":
        pool, smooth = _main_candidates(data.columns, data.norm_levels, opts.transforms,
                                        categorical)
        matrix = np.column_stack([c.column for c in pool]) if pool else None
    cache: dict = {}
    best: tuple[float, str, list[Term], list[tuple[str, float]]] | None = None
    for response, r in runs:
        search = GreedySearch(r=r, y=y, weights=weights, y_scale=data.y_scale,
                              log_response=response == "log",
                              row_scale=rows if response == "identity" else None)
        if opts.mode == "paper":
            terms = _paper(search, data.columns, data.norm_levels, opts)
        else:
            pairs = log_pairs(smooth) if response == "log" and opts.log_pairs else smooth
            terms = search.run(pool, opts.min_improvement, opts.max_terms, opts.interactions,
                               pairs, data.columns, cache if pairs is smooth else {}, matrix,
                               preferred if opts.physical_ties else None, ratio_pairs,
                               opts.lookahead)
        err = search.err
        if best is None or (best[0] > 1e-9 and err < best[0] * (1.0 - opts.min_improvement)):
            best = (err, response, terms, search.path)
    assert best is not None
    early = not opts.power_until or y.size < opts.power_until
    if opts.power_first and early and len(runs) > 1 and best[0] > 1e-9:
        found = power_first(pool, runs[1][1], y, weights, data.y_scale, opts, smooth,
                            data.columns, cache, ratio_pairs)
        if found is not None and found[0] < best[0] * (1.0 - opts.min_improvement):
            best = (found[0], "log", found[1], found[2])
    if preferred and not best[2]:
        prior = two_point_prior(data.columns, data.norm_levels, runs[0][1], preferred)
        if prior is not None:
            return prior[0], prior[1], [*best[3], ("prior:" + prior[1][0].label, best[0])]
    return best[1], best[2], best[3]


def _levels(given: Sequence[float] | None, observed: np.ndarray) -> np.ndarray:
    lv = np.asarray([] if given is None else given, dtype=float).reshape(-1)
    return np.union1d(lv, observed)


def _y_scale(y_ref: float, y: np.ndarray) -> float:
    big = float(np.abs(y).max(initial=0.0))
    if y_ref > 1e-9 * big and y_ref > 0:
        return y_ref
    m = float(np.abs(y).mean())
    return m if m > 0 else 1.0


def _main_candidates(
    columns: Mapping[str, np.ndarray],
    norm_levels: Mapping[str, np.ndarray],
    transforms: Sequence[str],
    categorical: frozenset[str] = frozenset(),
) -> tuple[list[Candidate], dict[str, list[str]]]:
    """Smooth transforms and hinges of each attribute with >= 2 distinct observed values;
    for a categorical one, an indicator per observed level (with two levels its code is
    that indicator already: it keeps the identity, and so its interactions)."""
    pool: list[Candidate] = []
    smooth: dict[str, list[str]] = {}
    for a, z in columns.items():
        seen = np.unique(z)
        if seen.size < 2:
            continue
        if a in categorical and seen.size > 2:
            pool += [Candidate(t, t.evaluate(columns))
                     for t in (Term.main(a, "level", float(k)) for k in seen)]
            continue
        positive = bool(np.all(seen > 0) and np.all(norm_levels[a] > 0))
        smooth[a] = ["identity"]
        for t in ("identity", "reciprocal", "log"):
            if t in transforms and (t == "identity" or positive):
                if t != "identity":
                    smooth[a].append(t)
                term = Term.main(a, t)
                pool.append(Candidate(term, term.evaluate(columns)))
        if "piecewise" in transforms:
            for k in spread_levels(seen[1:-1]):  # interior levels: >= 2 distinct each side
                for t in KNOTTED:
                    term = Term.main(a, t, float(k))
                    pool.append(Candidate(term, term.evaluate(columns)))
        if "step" in transforms:
            pool += _step_candidates(a, seen, columns)
    return pool, smooth


def _step_candidates(a: str, seen: np.ndarray, columns: Mapping[str, np.ndarray]
                     ) -> list[Candidate]:
    """A jump below each midpoint of two neighbouring observed levels of ``a`` (a memory
    cliff between them), where each side holds at least two runs."""
    z = columns[a]
    out = []
    for k in spread_levels((seen[:-1] + seen[1:]) / 2):
        below = int(np.sum(z < k))
        if 2 <= below <= z.size - 2:
            term = Term.main(a, "step_below", float(k))
            out.append(Candidate(term, term.evaluate(columns)))
    return out


def _paper(search: GreedySearch, columns: Mapping[str, np.ndarray],
           norm_levels: Mapping[str, np.ndarray], opts: PredictorOptions) -> list[Term]:
    """One term per attribute (identity or reciprocal, whichever has the lower LOO error),
    in the order given; attributes whose column adds no rank are skipped."""
    n = search.r.size
    for a, z in columns.items():
        if len(search.terms) >= min(opts.max_terms, n - 1):
            break
        positive = bool(np.all(z > 0) and np.all(norm_levels[a] > 0))
        options = ["identity"] + (["reciprocal"] if positive and "reciprocal" in opts.transforms
                                  else [])
        cands = [Candidate(Term.main(a, t), Term.main(a, t).evaluate(columns)) for t in options]
        errs = search.evaluate(np.column_stack([c.column for c in cands]))
        c = search.on_rows(cands[0].column[:, None])[:, 0]
        R = c - search.Q @ (search.Q.T @ c)
        if np.linalg.norm(R) <= 1e-7 * np.linalg.norm(c):
            continue
        best = first_best(errs)
        search.accept(cands[best], float(errs[best]))
    return list(search.terms)


def _final_fit_with_noise(A: np.ndarray, r: np.ndarray, response: str, opts: PredictorOptions,
                          rows: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray, float, str, int]:
    """``_final_fit`` and the noise model: (params, cov, residual variance, variance kind,
    dof), an identity response's noise relative to its prediction when ``opts`` ask for it
    (``relative_noise``) and it is defined. With row weights ``rows`` (1/y: a relative
    weighted fit) the fit on the weighted rows gives the relative noise directly."""
    if rows is not None:
        params, cov, resid_var, dof = _final_fit(A * rows[:, None], r * rows, opts.final_fit)
        return params, cov, resid_var, RELATIVE if dof > 0 else CONSTANT, dof
    params, cov, resid_var, dof = _final_fit(A, r, opts.final_fit)
    wanted = opts.relative_noise and response == "identity" and dof > 0
    relative = relative_noise(A, r, params) if wanted else None
    if relative is None:
        return params, cov, resid_var, CONSTANT, dof
    return params, relative[0], relative[1], RELATIVE, dof


def _final_fit(A: np.ndarray, r: np.ndarray, how: str
               ) -> tuple[np.ndarray, np.ndarray, float, int]:
    """(params, cov_params, residual variance, residual dof) of OLS of r on A."""
    n, p = A.shape
    dof = n - p
    if dof <= 0 or how == "numpy":
        params, *_ = np.linalg.lstsq(A, r, rcond=None)
        if dof <= 0:
            return params, np.full((p, p), np.nan), float("nan"), 0
        resid = r - A @ params
        s2 = float(resid @ resid) / dof
        return params, s2 * np.linalg.inv(A.T @ A), s2, dof
    import warnings

    from statsmodels.regression.linear_model import OLS

    with warnings.catch_warnings():  # a rank-deficient A is fitted on its column space
        warnings.filterwarnings("ignore", "The design matrix is rank-deficient")
        res = OLS(r, A).fit()
        cov = np.asarray(res.cov_params(), float)
    return (np.asarray(res.params, float), cov, float(res.scale), int(round(res.df_resid)))
