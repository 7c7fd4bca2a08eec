"""Categorical attributes: columns of a replay CSV (instance family, storage kind, variant),
and the category names shown for a live campaign's categorical knobs (``named``).

A column is categorical when named with ``--categorical``, or when it is named in
``--attributes`` and none of its first rows holds a number. Its values become codes 1..k in the
sorted order of the category strings (the planner sees levels; ``ReplayDataset.categories``
maps them back, and the family models one-hot them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

from nimo.errors import DataError
from nimo.space import Assignment

V = TypeVar("V")


def categorical_columns(p: str, header: Sequence[str], first: Sequence[tuple[int, list[str]]],
                        named: Sequence[str] | None, given: Sequence[str]) -> list[str]:
    """The categorical columns: ``given`` (checked) and the named non-numeric ones."""
    for c in given:
        if c not in header:
            raise DataError(f"{p}:1: --categorical column {c!r} not in the data",
                            hint="columns: " + ", ".join(header))
    auto = [a for a in named or () if a in header and a not in given
            and not _numbers(first, list(header).index(a))]
    return [*given, *auto]


def _numbers(first: Sequence[tuple[int, list[str]]], i: int) -> bool:
    """Whether any of the first rows has a number in column i (a column of numbers with a
    bad cell is a numeric column whose reader names the cell, not a categorical one)."""
    for _, row in first:
        try:
            float(row[i])
            return True
        except (TypeError, ValueError, IndexError):
            continue
    return False


class Coder:
    """Replaces category strings by first-seen codes while reading; ``finish`` renumbers
    them in sorted order."""

    def __init__(self, header: Sequence[str], columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.index = [list(header).index(c) for c in columns]
        self.seen: list[dict[str, int]] = [{} for _ in columns]

    def rows(self, rows: Iterator[tuple[int, list[str]]]) -> Iterator[tuple[int, list[str]]]:
        if not self.columns:
            yield from rows
            return
        for line, row in rows:
            row = list(row)
            for k, i in enumerate(self.index):
                if i < len(row):
                    value = row[i].strip()
                    code = self.seen[k].setdefault(value, len(self.seen[k]) + 1)
                    row[i] = str(code)
            yield line, row

    def finish(self, names: Sequence[str], data: Mapping[Assignment, V]
               ) -> tuple[dict[Assignment, V], dict[str, tuple[str, ...]]]:
        """(data with sorted codes, {column: categories in code order})."""
        if not self.columns:
            return dict(data), {}
        categories = {c: tuple(sorted(self.seen[k])) for k, c in enumerate(self.columns)}
        remap = {list(names).index(c): {float(code): float(categories[c].index(v) + 1)
                                        for v, code in self.seen[k].items()}
                 for k, c in enumerate(self.columns) if c in names}
        out = {tuple(remap[j][x] if j in remap else x for j, x in enumerate(a)): reps
               for a, reps in data.items()}
        return out, categories


Categories = Mapping[str, Sequence[str]]


def named(assignment: Mapping[str, float], categories: Categories) -> dict[str, str | float]:
    """An assignment with each categorical attribute's level (code k) as its category name
    (``categories[name][k - 1]``); other values unchanged."""
    return {n: categories[n][int(round(v)) - 1] if n in categories else v
            for n, v in assignment.items()}


def shown(value: object) -> str:
    """A level as printed in a log line: numbers as ``%g``, category names as they are."""
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def named_document(doc: dict[str, Any], categories: Categories) -> dict[str, Any]:
    """A campaign's ``--json`` document with the category names in its iterations'
    assignments and the categories listed (unchanged without categorical attributes)."""
    if not categories:
        return doc
    iterations = [{**it, "assignment": named(it["assignment"], categories)}
                  for it in doc.get("iterations") or ()]
    return {**doc, "iterations": iterations,
            "categories": {n: list(c) for n, c in categories.items()}}
