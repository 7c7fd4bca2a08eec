"""Options of predictor fitting, as read from a design YAML's ``predictors:`` mapping."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nimo.errors import ConfigError

FAMILY_KEYS = ("family", "candidates")  # the model family (nimo.families.options)

MODES = ("auto", "paper")
ALLOWED_TRANSFORMS = ("identity", "reciprocal", "log", "piecewise")
# also offered when named in ``predictors.transforms`` (not by default): ``step`` = a jump
# below each midpoint between observed levels
OPTIONAL_TRANSFORMS = ("step",)


@dataclass(frozen=True)
class PredictorOptions:
    """How :func:`nimo.predictors.fit_predictor` builds a predictor.

    ``mode='paper'``: the paper's form, one term per active attribute, identity or reciprocal
    (chosen by LOO error). ``mode='auto'``: greedy forward selection over ``transforms``
    (``piecewise`` = hinges at interior levels, both directions), pairwise ``interactions``
    and, if ``log_response``, a log response; a term is kept only if it cuts the LOO error
    by at least ``min_improvement`` (relative). At most ``max_terms`` terms and never more
    than n - 2 (one residual degree of freedom is kept). ``physical`` (auto mode): where
    the sample cannot tell transforms apart, use the attributes' physical direction (a
    capacity's reciprocal, a load's or latency's identity): it breaks exact ties of the
    selection and gives two samples that differ in one attribute ``a + b g(x)`` instead of
    their mean (see :mod:`nimo.predictors.prior`; ``physical_ties: false`` keeps only the
    latter). ``final_fit``: ``'statsmodels'``
    (OLS, its ``cov_params``) or ``'numpy'`` (same formulas, faster).
    """

    mode: str = "auto"
    transforms: tuple[str, ...] = ALLOWED_TRANSFORMS
    interactions: bool = True
    log_response: bool = True
    min_improvement: float = 0.03
    max_terms: int = 12
    final_fit: str = "statsmodels"
    # the model holds predicted T (and the delivered model each predictor's prediction)
    # within a range of its measured runs and flags (and widens the intervals of) predictions
    # far from every measurement; off: the paper's behaviour
    bounded: bool = False
    # small-sample prior and tie-break by the attributes' physical direction (auto mode)
    physical: bool = False
    physical_ties: bool = True  # with ``physical``: also break exact selection ties by it
    # with ``bounded``: a Gaussian-process correction of T's log-residuals over the training
    # runs (nimo.model.residual), used only while it lowers the cross-validated error
    residual: bool = False
    # with ``residual``: a correction in use stays on while its fold error is below this
    # share of the uncorrected one (it comes on only below 0.8 of it); 0: 0.8 both ways
    residual_hold: float = 0.0
    # with ``bounded``: blend the model with a Gaussian process on log T, by the weight the
    # cross-validation chooses (nimo.planner.blend; 0 keeps the parametric model alone)
    gp: bool = False
    # with ``gp``: the blend is considered only once the runs number at least this share of
    # the candidate assignments (a process interpolates between runs; where they are sparse,
    # the parametric form alone extrapolates better); 0: at any density
    gp_min_share: float = 0.0
    # with ``gp_min_share``: the blend is also considered once a campaign has this many runs,
    # however large its space (a long campaign is one whose forms keep missing); 0: the share
    # alone
    gp_min_runs: int = 0
    # with ``gp_min_runs``: where only the run count lets the blend in, the delivered model
    # takes the folds' weight only while the blend predicted the last this many runs, each
    # before it ran, better on average than the model without it; 0: no probation
    gp_probation: int = 0
    # after a new run, keep the previous fit's form (response and terms, refitted) unless the
    # newly selected one cuts the LOO error by this fraction; 0: select afresh every time
    sticky: float = 0.0
    # hinges of a capacity over a load (a memory cliff whose edge grows with the input),
    # offered once the capacity has a main effect (nimo.predictors.ratios)
    load_ratios: bool = False
    # an occupancy's (o_a, o_n, o_d) form is selected by the error it makes in T: each
    # sample's error divided by its total occupancy o_a + o_n + o_d, not by the occupancy
    # itself (where it is a negligible part of T, its relative error hardly matters)
    share_errors: bool = False
    # with ``sticky``: an occupancy's kept and new forms are compared by the error they make
    # in T (as ``share_errors`` judges, but only for this choice; the selection is unchanged)
    sticky_share: bool = False
    # auto mode: when no single term cuts the error enough, a main effect together with an
    # interaction it unlocks may join as a pair (a cliff that moves with another attribute)
    lookahead: bool = False
    # auto mode: also a search on log y that starts among the log main effects alone (a
    # product of powers, nimo.predictors.power), taken where it cuts the error by
    # ``min_improvement``
    power_first: bool = False
    # with ``power_first``: the search stays among log main effects and their products (a
    # product of powers, which extrapolates as a polynomial in log x), never exp(b x) terms
    power_log_log: bool = False
    # with ``power_first``: the power-law search only while a fit has fewer samples than
    # this (a low-data prior: a run time scales as a power of its knobs); 0: always
    power_until: int = 0
    # auto mode: on log y, interactions only between log factors (never exp(b x z))
    log_pairs: bool = False
    # an identity response's noise taken proportional to its prediction (run times scatter
    # by a share of themselves; nimo.predictors.variance): intervals only, no prediction
    # changes; off: one residual variance, the paper's regression
    relative_noise: bool = False
    # an identity response fitted (and its terms selected) by least squares weighted by
    # 1/y^2, each run's relative error, as the selection judges it; its noise relative
    weighted: bool = False
    # the delivered model's T held within 1.5x of the runs an assignment has more or less
    # of in every attribute, while the runs agree (nimo.model.monotone; the planner's own
    # picks and stop read the model before the hold: no run changes); needs ``bounded``
    monotone: bool = False
    # the delivered model averaged with the committee's plausible alternative fits
    # (nimo.model.average; the planner's picks read the model before it) and its internal
    # error scaled by the average's LOO error over the model's; off: the selected fit alone
    committee_mean: bool = False
    # the family of the model a replay hands over (``nimo.families.options``); None: the
    # planner's own model, as before
    family: Any = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"predictors.mode: unknown {self.mode!r}", hint="valid: auto, paper")
        known = (*ALLOWED_TRANSFORMS, *OPTIONAL_TRANSFORMS)
        bad = [t for t in self.transforms if t not in known]
        if bad or not self.transforms:
            raise ConfigError(f"predictors.transforms: unknown {bad or 'empty list'}",
                              hint="valid: " + ", ".join(known))
        if not 0.0 <= self.min_improvement < 1.0:
            raise ConfigError("predictors.min_improvement must lie in [0, 1)")
        if not 0.0 <= self.sticky < 1.0:
            raise ConfigError(f"predictors.sticky must lie in [0, 1), not {self.sticky}")
        if not 0.0 <= self.residual_hold <= 1.0:
            raise ConfigError(f"predictors.residual_hold must lie in [0, 1], not "
                              f"{self.residual_hold}")
        if self.power_until < 0:
            raise ConfigError(f"predictors.power_until must be >= 0 (0: always), not "
                              f"{self.power_until}")
        if self.residual_hold and not self.residual:
            raise ConfigError("predictors.residual_hold needs predictors.residual: true")
        if not 0.0 <= self.gp_min_share < 1.0:
            raise ConfigError(f"predictors.gp_min_share must lie in [0, 1), not "
                              f"{self.gp_min_share}")
        if self.gp_min_runs < 0:
            raise ConfigError(f"predictors.gp_min_runs must be >= 0, not {self.gp_min_runs}")
        if self.gp_probation < 0:
            raise ConfigError(f"predictors.gp_probation must be >= 0, not {self.gp_probation}")
        if self.max_terms < 0:
            raise ConfigError("predictors.max_terms must be >= 0")
        if self.final_fit not in ("statsmodels", "numpy"):
            raise ConfigError("predictors.final_fit must be 'statsmodels' or 'numpy'")
        if self.sticky_share and not self.sticky:
            raise ConfigError("predictors.sticky_share needs predictors.sticky above 0")
        if self.lookahead and not self.interactions:
            raise ConfigError("predictors.lookahead needs predictors.interactions: true")
        if self.gp_min_share and not self.gp:
            raise ConfigError("predictors.gp_min_share needs predictors.gp: true")
        if self.gp_min_runs and not self.gp_min_share:
            raise ConfigError("predictors.gp_min_runs needs predictors.gp_min_share above 0",
                              hint="without a share the blend is considered at any density")
        if self.gp_probation and not self.gp_min_runs:
            raise ConfigError("predictors.gp_probation needs predictors.gp_min_runs above 0",
                              hint="the probation judges blends the run count lets in")
        for key in ("residual", "gp", "monotone"):
            if getattr(self, key) and not self.bounded:
                raise ConfigError(f"predictors.{key} needs predictors.bounded: true",
                                  hint="the correction lives on the bounded model's support")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> PredictorOptions:
        """Options from a mapping; unknown keys raise ConfigError listing the valid ones."""
        if d is None:
            return cls()
        if not isinstance(d, Mapping):
            raise ConfigError("predictors: must be a mapping")
        valid = [f.name for f in dataclasses.fields(cls) if f.name != "family"]
        valid += FAMILY_KEYS
        unknown = sorted(set(d) - set(valid))
        if unknown:
            raise ConfigError(f"predictors: unknown key(s) {', '.join(map(str, unknown))}",
                              hint="valid: " + ", ".join(valid))
        kw = {k: v for k, v in d.items() if k not in FAMILY_KEYS}
        from nimo.families.options import family_options

        kw["family"] = family_options(d)
        if "transforms" in kw:
            t = kw["transforms"]
            if not isinstance(t, str | list | tuple):
                raise ConfigError("predictors.transforms: expected a list of names",
                                  hint="valid: " + ", ".join(ALLOWED_TRANSFORMS))
            kw["transforms"] = (t,) if isinstance(t, str) else tuple(t)
        for key, kind in (("min_improvement", float), ("max_terms", int), ("sticky", float),
                          ("gp_min_share", float), ("gp_min_runs", int),
                          ("gp_probation", int), ("residual_hold", float),
                          ("power_until", int)):
            try:
                if key in kw:
                    kw[key] = kind(kw[key])
            except (TypeError, ValueError, OverflowError) as e:
                raise ConfigError(f"predictors.{key}: bad number ({e})") from None
        for key in ("interactions", "log_response", "bounded", "physical",
                    "physical_ties", "residual", "gp", "load_ratios", "share_errors",
                    "sticky_share", "lookahead", "relative_noise", "weighted", "monotone",
                    "committee_mean", "power_first", "power_log_log", "log_pairs"):
            if key in kw and not isinstance(kw[key], bool):
                raise ConfigError(f"predictors.{key} must be true or false")
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["transforms"] = list(self.transforms)
        # echoed only when set (older designs read the same)
        for key in ("residual", "residual_hold", "gp", "gp_min_share", "gp_min_runs",
                    "gp_probation", "sticky",
                    "load_ratios", "share_errors", "sticky_share", "lookahead", "relative_noise",
                    "weighted", "monotone", "committee_mean", "power_first",
                    "power_log_log", "power_until", "log_pairs"):
            if not d[key]:
                del d[key]
        family = d.pop("family")
        if family is not None:
            d.update(family.to_dict())
        return d
