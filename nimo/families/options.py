"""The design's choice of model family: ``predictors: {family: NAME, candidates: [...]}``.

``family: paper`` (or any other name of ``FAMILIES``) fixes the form of the model a replay
hands over; ``family: auto`` chooses among ``candidates`` by the honest estimate of
:mod:`nimo.families.select`. Without the key nothing changes (the planner's own model).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nimo.config import Checker, Choice, Kind, option, section
from nimo.config import to_dict as section_dict
from nimo.families.model import FAMILIES
from nimo.families.select import AUTO_CANDIDATES

KEYS = ("family", "candidates")


class FamilyList(Kind):
    """A non-empty list of family names."""

    def parse(self, ck: Checker, key: str, value: Any) -> tuple[str, ...]:
        items = ck.non_empty_list(value, key, "list of families")
        return tuple(Choice(FAMILIES).parse(ck, f"{key}[{i}]", v) for i, v in enumerate(items))


@section
class FamilyOptions:
    family: str = option(Choice(("auto", *FAMILIES)), default="auto")
    candidates: tuple[str, ...] = option(FamilyList(), default=AUTO_CANDIDATES)

    def to_dict(self) -> dict[str, Any]:
        d = dict(section_dict(self))
        d["candidates"] = list(self.candidates)
        return d


def family_options(raw: Mapping[str, Any], where: str = "predictors") -> FamilyOptions | None:
    """The family keys of a design's ``predictors`` mapping, checked; None without them."""
    given = {k: raw[k] for k in KEYS if k in raw}
    if not given:
        return None
    return Checker().section(FamilyOptions, given, where)
