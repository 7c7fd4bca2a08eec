"""Samples: one completed run's assignment, run time and occupancies.

Also Algorithm 3's arithmetic (pure): from utilisation U, run time T and data flow D to the
occupancies o_a and o_s, and the split of o_s into o_n and o_d.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from nimo.errors import DataError

TARGETS = ("o_a", "o_n", "o_d", "D")
# The unit of data of a run that moved none: such a run is one unit of work (D = 1) that
# spent all its time computing (o_a = T, o_n = o_d = 0), so that T = D x (o_a + o_n + o_d).
NO_DATA_UNIT = 1.0


@dataclass(frozen=True)
class Occupancies:
    o_a: float
    o_n: float
    o_d: float
    D: float

    @property
    def o_s(self) -> float:
        return self.o_n + self.o_d

    @property
    def T(self) -> float:
        return self.D * (self.o_a + self.o_n + self.o_d)


def occupancies(
    T: float, U: float, D: float, net_io_s: float | None = None, disk_io_s: float | None = None
) -> Occupancies:
    """Algorithm 3: solve U = o_a/(o_a+o_s), D/T = 1/(o_a+o_s), then split o_s.

    ``net_io_s`` and ``disk_io_s`` are the network and storage parts of the average I/O time
    (step 3); o_s is split in their proportion (step 4). Without them o_s stays whole in o_n
    (no split), as for datasets that record only U and D.
    """
    if T <= 0 or D <= 0:
        raise DataError(f"Algorithm 3 needs T > 0 and D > 0 (got T={T}, D={D})")
    if not 0.0 <= U <= 1.0:
        raise DataError(f"utilisation U must lie in [0, 1] (got {U})")
    per_unit = T / D
    o_a = U * per_unit
    o_s = (1.0 - U) * per_unit
    if net_io_s is None or disk_io_s is None or net_io_s + disk_io_s <= 0:
        return Occupancies(o_a=o_a, o_n=o_s, o_d=0.0, D=D)
    share = net_io_s / (net_io_s + disk_io_s)
    return Occupancies(o_a=o_a, o_n=o_s * share, o_d=o_s * (1.0 - share), D=D)


def occupancies_without_data(T: float) -> Occupancies:
    """Algorithm 3 for a run that moved no data: o_n = o_d = 0 (no I/O was made), and the
    run is one unit of work (``D = NO_DATA_UNIT``), all of it compute: o_a = T / D."""
    if T <= 0:
        raise DataError(f"Algorithm 3 needs T > 0 (got T={T})")
    return Occupancies(o_a=T / NO_DATA_UNIT, o_n=0.0, o_d=0.0, D=NO_DATA_UNIT)


@dataclass(frozen=True)
class Sample:
    """One completed run of G(I) on an assignment: ``<rho_1..rho_k, o_a, o_n, o_d, D>`` and T.

    ``cost_s`` is the learning time the run charged (its T on replay; T plus set-up and
    teardown live). ``profile`` holds measured resource-profile values (Section 2.5), and
    ``meta`` anything the collector wants to keep (split method, raw monitor summaries).
    """

    assignment: Mapping[str, float]
    T: float
    D: float | None = None
    U: float | None = None
    o_a: float | None = None
    o_n: float | None = None
    o_d: float | None = None
    cost_s: float | None = None
    profile: Mapping[str, float] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_occupancies(self) -> bool:
        return None not in (self.o_a, self.o_n, self.o_d, self.D)

    @property
    def charged_s(self) -> float:
        return self.T if self.cost_s is None else self.cost_s

    def with_no_data_occupancies(self) -> Sample:
        """This sample, its occupancies filled in when the run moved no data (``meta``
        ``data_bytes`` 0) and they are missing (stored by a version that refused such runs);
        otherwise itself."""
        if self.has_occupancies or self.meta.get("data_bytes") != 0:
            return self
        occ = occupancies_without_data(self.T)
        return replace(self, D=occ.D, o_a=occ.o_a, o_n=occ.o_n, o_d=occ.o_d)

    def target(self, name: str) -> float:
        """Value of a predictor target: one of o_a, o_n, o_d, D or T."""
        value = getattr(self, name)
        if value is None:
            raise DataError(f"sample has no {name}")
        return float(value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignment": dict(self.assignment),
            "T": self.T,
            "D": self.D,
            "U": self.U,
            "o_a": self.o_a,
            "o_n": self.o_n,
            "o_d": self.o_d,
            "cost_s": self.cost_s,
            "profile": dict(self.profile),
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sample:
        return cls(
            assignment={k: float(v) for k, v in d["assignment"].items()},
            T=float(d["T"]),
            D=d.get("D"),
            U=d.get("U"),
            o_a=d.get("o_a"),
            o_n=d.get("o_n"),
            o_d=d.get("o_d"),
            cost_s=d.get("cost_s"),
            profile=dict(d.get("profile") or {}),
            meta=dict(d.get("meta") or {}),
        )
