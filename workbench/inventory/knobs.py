"""Resource knobs: the registry of knob kinds, ``knobs`` and ``assignments`` of an inventory.

An ``app_param`` knob whose levels are names (``levels: [md5, sha256]``) is categorical: the
planner sees the codes 1..k of the names in sorted order (``Knob.categories``), the argv gets
the name (``Knob.argv_value``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nimo.config import (
    Checker,
    Choice,
    Kind,
    Number,
    Text,
    option,
    option_names,
    section,
    valid_hint,
)
from nimo.space import Attribute
from workbench.inventory.argv import PLACEHOLDERS
from workbench.inventory.values import IDENTIFIER


@dataclass(frozen=True)
class KnobKind:
    """What a knob kind controls: its attribute's direction, resource, unit and valid range."""

    name: str
    direction: int
    resource: str
    unit: str
    lo: float
    hi: float
    lo_open: bool = False
    load: bool = False  # a workload attribute (more = more work): direction -1


# Registry of knob kinds (extend here; the executor maps each kind to a mechanism).
KNOB_KINDS: dict[str, KnobKind] = {
    k.name: k
    for k in (
        KnobKind("cpu_share", +1, "compute", "cpu", 0.0, 64.0, lo_open=True),
        KnobKind("memory_mb", +1, "compute", "MB", 16.0, 1 << 22),
        KnobKind("delay_ms", -1, "network", "ms", 0.0, 10_000.0),
        KnobKind("rate_mbit", +1, "network", "Mbit/s", 0.0, 100_000.0, lo_open=True),
        # Slurm executor only: nodes of a job and tasks on each (cpu_share is then per node)
        KnobKind("nodes", +1, "compute", "nodes", 1.0, 100_000.0),
        KnobKind("tasks_per_node", +1, "compute", "tasks", 1.0, 4096.0),
        # workload knobs (workbench/workload.py): the input's size, the app's own parameter
        KnobKind("dataset_mb", -1, "storage", "MB", 0.0, 1 << 20, lo_open=True, load=True),
        KnobKind("dataset_files", -1, "storage", "files", 1.0, 1 << 20, load=True),
        KnobKind("app_param", -1, "compute", "value", -1e12, 1e12, load=True),
    )
}
# app_param knobs say what more means: more work (load) or more capacity (e.g. threads)
APP_PARAM_DIRECTIONS = {"load": -1, "capacity": +1}
SLURM_KNOB_KINDS = ("nodes", "tasks_per_node")  # whole numbers; need `executor: slurm`
KNOB_KIND = Choice(tuple(KNOB_KINDS))


@dataclass(frozen=True)
class KnobLevels(Kind):
    """A knob's levels: distinct numbers in its kind's range, returned sorted."""

    knob: KnobKind | None = None

    def parse(self, ck: Checker, key: str, value: Any) -> tuple[float, ...]:
        items = ck.non_empty_list(value, key, "list of numbers")
        spec = self.knob
        number = Number(spec.lo, spec.hi, spec.lo_open) if spec else Number()
        for j, v in enumerate(items):
            if isinstance(v, str):
                raise ck.fail(f"{key}[{j}]", f"must be a number, got {v!r}", f"{number.valid()}; "
                              "names (categories) only on an app_param knob")
        levels = [number.parse(ck, f"{key}[{j}]", v) for j, v in enumerate(items)]
        if len(set(levels)) != len(levels):
            raise ck.fail(key, "has duplicate levels", "each level once")
        if spec and spec.name == "cpu_share" and any(
                abs(v * 100 - round(v * 100)) > 1e-9 for v in levels):
            raise ck.fail(key, "cpu_share needs a resolution of 0.01",
                          "valid: e.g. 0.25, 0.5, 1.0")
        if spec and spec.name in (*SLURM_KNOB_KINDS, "dataset_files") and any(
                v != int(v) for v in levels):
            raise ck.fail(key, f"{spec.name} levels must be whole numbers", "valid: e.g. 1, 2, 4")
        return tuple(sorted(levels))


@section
class Knob:
    """A resource knob with the levels to explore (``name`` and ``unit`` default to the
    kind's)."""

    name: str = option(Text(IDENTIFIER, "valid: an identifier (letters, digits, _)"))
    kind: str = option(KNOB_KIND)
    levels: tuple[float, ...] = option(KnobLevels())
    unit: str = option(Text())
    direction: str | None = option(Choice(tuple(APP_PARAM_DIRECTIONS)), default=None)
    categories: tuple[str, ...] = field(default=())  # a categorical knob's names (sorted)

    def attribute(self) -> Attribute:
        """The resource-space attribute this knob explores."""
        k = KNOB_KINDS[self.kind]
        if self.categories:  # codes 1..k, no direction of capacity or load
            return Attribute(self.name, self.levels, +1, k.resource, self.unit,
                             categories=self.categories)
        if self.direction is not None:  # an app_param knob
            sign = APP_PARAM_DIRECTIONS[self.direction]
            return Attribute(self.name, self.levels, sign, k.resource, self.unit, load=sign < 0)
        return Attribute(self.name, self.levels, k.direction, k.resource, self.unit, k.load)

    def argv_value(self, level: float) -> str | float:
        """What a run's argv gets for a level: its name when the knob is categorical."""
        return self.categories[int(round(level)) - 1] if self.categories else level


def parse_knobs(ck: Checker, raw: Any) -> tuple[Knob, ...]:
    """The ``knobs`` list: each kind at most once, names unique and not placeholders."""
    if raw is None:
        raise ck.fail("knobs", "is required", "a list of {name, kind, levels}")
    knobs: list[Knob] = []
    for i, item in enumerate(ck.non_empty_list(raw, "knobs")):
        key = f"knobs[{i}]"
        knob = _knob(ck, item, key)
        if knob.name in PLACEHOLDERS:
            raise ck.fail(f"{key}.name", f"{knob.name!r} is reserved", valid_hint(PLACEHOLDERS))
        if any(k.name == knob.name for k in knobs):
            raise ck.fail(f"{key}.name", f"duplicate knob name {knob.name!r}", "each name once")
        if knob.kind != "app_param" and any(k.kind == knob.kind for k in knobs):
            raise ck.fail(f"{key}.kind", f"a second {knob.kind} knob", "each kind at most once")
        knobs.append(knob)
    return tuple(knobs)


def _knob(ck: Checker, raw: Any, key: str) -> Knob:
    m = ck.mapping(raw, key, option_names(Knob))
    kind = KNOB_KIND.parse(ck, f"{key}.kind", ck.required(m, key, "kind"))
    spec = KNOB_KINDS[kind]
    names: tuple[str, ...] = ()
    if kind == "app_param":
        levels = ck.non_empty_list(ck.required(m, key, "levels"), f"{key}.levels",
                                   "list of numbers or of names (categories)")
        names = _categories(ck, levels, f"{key}.levels")
    if names and "direction" in m:
        raise ck.fail(f"{key}.direction", "a knob of named levels (categories) has no "
                      "direction", "valid: no direction (remove it)")
    if not names and (kind == "app_param") != ("direction" in m):
        raise ck.fail(f"{key}.direction", "is required for (only) an app_param knob",
                      valid_hint(tuple(APP_PARAM_DIRECTIONS)))
    filled = {**m, "name": m.get("name", kind),
              "unit": m.get("unit", "category" if names else spec.unit)}
    if names:
        filled["levels"] = list(range(1, len(names) + 1))
    knob = ck.section(Knob, filled, key, {"levels": KnobLevels(spec)})
    return dataclasses.replace(knob, categories=names) if names else knob


def _categories(ck: Checker, raw: list[Any], key: str) -> tuple[str, ...]:
    """An app_param knob's level names, sorted (empty when its levels are numbers)."""
    if not any(isinstance(v, str) for v in raw):
        return ()
    for j, v in enumerate(raw):
        if not isinstance(v, str) or not v.strip():
            raise ck.fail(f"{key}[{j}]", f"{v!r} is not a category name", "valid: every "
                          "level a non-empty name (categories), or every level a number")
    dup = next((v for j, v in enumerate(raw) if v in raw[:j]), None)
    if dup is not None:
        raise ck.fail(key, f"has duplicate level {dup!r}", "valid: each level once")
    return tuple(sorted(raw))


def parse_assignments(ck: Checker, raw: Any, knobs: Sequence[Knob],
                      ) -> tuple[tuple[float, ...], ...]:
    """The optional ``assignments``: each names every knob once with one of its levels."""
    if raw is None:
        return ()
    names = [k.name for k in knobs]
    rows = []
    for i, item in enumerate(ck.non_empty_list(raw, "assignments")):
        key = f"assignments[{i}]"
        m = ck.mapping(item, key, names)
        rows.append(tuple(_level(ck, k, ck.required(m, key, k.name), f"{key}.{k.name}")
                          for k in knobs))
    return tuple(rows)


def _level(ck: Checker, knob: Knob, raw: Any, key: str) -> float:
    if knob.categories:
        if raw not in knob.categories:
            raise ck.fail(key, f"{raw!r} is not a level of knob {knob.name}",
                          valid_hint(knob.categories))
        return float(knob.categories.index(raw) + 1)
    value = Number().parse(ck, key, raw)
    if value not in knob.levels:
        raise ck.fail(key, f"{value:g} is not a level of knob {knob.name}",
                      valid_hint([f"{x:g}" for x in knob.levels]))
    return value
