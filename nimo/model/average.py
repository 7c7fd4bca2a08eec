"""A delivered model averaged with plausible alternative fits (``predictors.committee_mean``;
numpy only, like the rest of an exported model).

The model a campaign selects is one of several forms that fit its runs about equally well;
away from the runs they differ, and the selection switches between them as runs arrive.
The averaged model predicts ``sqrt(T * G)``, where ``T`` is the model's own prediction and
``G`` the geometric mean of ``T`` and each alternative's (its parametric predictors
combined as the model's are): the model keeps at least half the weight, and a form the
selection could as well have picked moves the prediction part of the way towards it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nimo.errors import ModelError
from nimo.model.equation import total_time
from nimo.model.predictor import FittedPredictor
from nimo.model.validate import predictors_from

Members = tuple[dict[str, FittedPredictor], ...]


@dataclass(frozen=True)
class MemberAverage:
    """The alternatives' predictors, per member a target -> predictor mapping of the
    model's kind (``occupancy``: D, o_a, o_n, o_d; ``direct``: T)."""

    members: Members

    def member_T(self, X: np.ndarray) -> np.ndarray:
        """Each member's T at rows X (rows = members; NaN where not finite and positive)."""
        return np.asarray([member_T(m, X) for m in self.members]).reshape(-1, len(X))

    def apply(self, X: np.ndarray, T: np.ndarray) -> np.ndarray:
        """The averaged T at rows X, given the model's own ``T`` there."""
        return averaged(T, self.member_T(X))

    def to_dict(self) -> dict[str, Any]:
        return {"members": [{t: p.to_dict() for t, p in m.items()} for m in self.members]}


def member_T(predictors: Mapping[str, FittedPredictor], X: np.ndarray) -> np.ndarray:
    """T of one member's predictors at rows X, NaN where not finite and positive."""
    with np.errstate(all="ignore"):
        T = total_time({t: p.predict(X) for t, p in predictors.items()})
    return np.where(np.isfinite(T) & (T > 0), T, np.nan)


@np.errstate(all="ignore")
def averaged(T: np.ndarray, members: np.ndarray) -> np.ndarray:
    """``sqrt(T * G)``, G the geometric mean of T and the finite positive member rows at
    each column; T where T is not finite and positive (nothing to average in log)."""
    T = np.asarray(T, float)
    ok = np.isfinite(T) & (T > 0)
    logs = np.log(np.where(ok, T, 1.0))
    rows = np.log(members) if len(members) else np.empty((0, T.size))
    finite = np.isfinite(rows)
    count = 1.0 + finite.sum(axis=0)
    geo = (logs + np.where(finite, rows, 0.0).sum(axis=0)) / count
    return np.where(ok, np.exp(0.5 * (logs + geo)), T)


def average_from(d: Any, targets: Sequence[str], names: Sequence[str]) -> MemberAverage | None:
    """The ``average`` field of a model's JSON (None when absent); ModelError when corrupt."""
    if d is None:
        return None
    members = d.get("members") if isinstance(d, Mapping) else None
    if not isinstance(members, list) or not all(isinstance(m, Mapping) for m in members):
        raise ModelError("corrupt cost model: bad field 'average' (its 'members' must list "
                         "objects of predictors)")
    out = []
    for i, m in enumerate(members):
        missing = [t for t in targets if t not in m]
        if missing:
            raise ModelError(f"corrupt cost model: bad field 'average.members[{i}]' (lacks "
                             f"predictor(s) {', '.join(missing)})")
        out.append(predictors_from({t: m[t] for t in targets}, names))
    return MemberAverage(tuple(out))
