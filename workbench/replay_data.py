"""Reading a replay CSV: streamed, checked, repeats aggregated while reading.

Memory grows with the distinct assignments, not the rows: each assignment keeps its run count,
the sum of its T and at most ``MAX_REPEATS`` compact measurement rows (beyond that a seeded
reservoir sample, so every recorded run has the same chance to be replayed); a ``Sample`` is
built only when a run asks for it. On files with at most ``MAX_REPEATS`` measurements per
assignment the dataset is exactly the one a read-everything reader builds.

Limits (a refusal naming the column or the count, and the flag that lifts it):

* ``max_levels``: distinct values of an attribute column found without ``--attributes`` (an
  id, a timestamp or a measured column is not an attribute; a column of 204 values ran the
  planner for 10 silent minutes);
* ``max_assignments``: distinct assignments in the data (the candidate grid).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nimo.errors import DataError
from nimo.records import Sample, occupancies
from nimo.space import Assignment, Attribute, ResourceSpace
from workbench.csvfile import (
    RowFilter,
    attribute_values,
    number,
    numbers,
    open_csv,
    read_header,
)
from workbench.replay_categories import Coder, categorical_columns
from workbench.replay_columns import (
    MAX_ASSIGNMENTS,
    MAX_LEVELS,
    ReadSpec,
    attribute_columns,
    check_categorical,
    check_measurements,
    data_kind,
    no_match,
)

MAX_REPEATS = 100
SNIFF_ROWS = 50  # rows that decide whether a column is numeric
_FOUND = ("a column with numbers in its first rows is an attribute; name the attribute "
          "columns with --attributes to leave it out")
_NEGATIVE = ("lat", "delay", "rtt")
_NETWORK = ("lat", "delay", "rtt", "bw", "bandwidth", "rate", "mbit", "net")
_STORAGE = ("disk", "storage", "iops", "io_")

Row = tuple[float, ...]  # (T, line) | (T, U, D, line) | (T, D, U or NaN, o_a, o_n, o_d, line)

# The longest run time read: sums over a million such runs stay finite in float64.
MAX_TIME_S = 1e302


def infer_attribute(name: str, levels: Sequence[float], load: bool = False) -> Attribute:
    """An Attribute with direction and resource guessed from the column name (latency, delay
    and RTT columns mean less capacity when larger; network/storage words set the resource).
    A ``load`` column (input size, iterations, a job parameter: more = more work) is marked
    ``Attribute.load`` and has direction -1 whatever its name."""
    low = name.lower()
    direction = -1 if load or any(w in low for w in _NEGATIVE) else 1
    resource = (
        "network" if any(w in low for w in _NETWORK)
        else "storage" if any(w in low for w in _STORAGE)
        else "compute"
    )
    return Attribute(name, tuple(levels), direction, resource, load=load)


@dataclass
class Repeats:
    """The measurements of one assignment: their count, the sum of their T and at most
    ``MAX_REPEATS`` compact rows."""

    count: int = 0
    sum_T: float = 0.0
    rows: list[Row] = field(default_factory=list)

    def add(self, row: Row, rnd: random.Random) -> None:
        self.count += 1
        self.sum_T += row[0]
        if len(self.rows) < MAX_REPEATS:
            self.rows.append(row)
        else:  # reservoir sampling: each of the count rows kept with the same chance
            j = rnd.randrange(self.count)
            if j < MAX_REPEATS:
                self.rows[j] = row

    def mean_T(self) -> float:
        if self.count == len(self.rows):
            return float(np.mean([r[0] for r in self.rows]))
        return self.sum_T / self.count


class Runs(Mapping[Assignment, tuple[Sample, ...]]):
    """Assignment -> its recorded samples, built from the compact rows on access."""

    def __init__(self, names: Sequence[str], kind: str, data: Mapping[Assignment, Repeats]):
        self._names, self._kind, self._data = tuple(names), kind, data

    def __getitem__(self, a: Assignment) -> tuple[Sample, ...]:
        assignment = dict(zip(self._names, a, strict=True))
        return tuple(_sample(self._kind, dict(assignment), r) for r in self._data[a].rows)

    def __iter__(self) -> Iterator[Assignment]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def repeats(self, a: Assignment) -> Repeats:
        return self._data[a]


def _sample(kind: str, assignment: dict[str, float], r: Row) -> Sample:
    T, line = r[0], int(r[-1])
    if kind == "direct":
        return Sample(assignment=assignment, T=T, cost_s=T, meta={"line": line})
    if kind == "derived":
        U, D = r[1], r[2]
        occ = occupancies(T, U, D)
        return Sample(assignment=assignment, T=T, D=D, U=U, o_a=occ.o_a, o_n=occ.o_n,
                      o_d=occ.o_d, cost_s=T, meta={"line": line, "split": "none"})
    D, U, o_a, o_n, o_d = r[1:6]
    return Sample(assignment=assignment, T=T, D=D, U=None if math.isnan(U) else U, o_a=o_a,
                  o_n=o_n, o_d=o_d, cost_s=T, meta={"line": line})


@dataclass(frozen=True)
class ReplayDataset:
    """Parsed measurements: per distinct assignment, the list of recorded samples. ``load``
    names the attributes read as load (more = more work)."""

    path: str
    space: ResourceSpace
    kind: str
    runs: Mapping[Assignment, tuple[Sample, ...]]
    load: tuple[str, ...] = ()
    # categorical attribute -> its categories; level k of it means categories[k - 1]
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def assignments(self) -> list[Assignment]:
        return list(self.runs)

    def mean_T(self, a: Assignment) -> float:
        if isinstance(self.runs, Runs):
            return self.runs.repeats(a).mean_T()
        return float(np.mean([s.T for s in self.runs[a]]))

    def all_samples_s(self) -> float:
        """Learning time to measure every distinct assignment once (mean T of each)."""
        return float(sum(self.mean_T(a) for a in self.runs))


def load_dataset(
    path: str | Path,
    attributes: Sequence[str] | None = None,
    time_column: str = "T",
    where: Sequence[tuple[str, str]] = (),
    *,
    load: Sequence[str] = (),
    max_levels: int = MAX_LEVELS,
    max_assignments: int = MAX_ASSIGNMENTS,
    categorical: Sequence[str] = (),
) -> ReplayDataset:
    """Read and check a replay CSV, streaming; errors name the file, line and column."""
    spec = ReadSpec(attributes, time_column, where, tuple(load), max_levels, max_assignments,
                    tuple(categorical))
    return _Reader(str(path), spec).read()


class _Reader:
    """One pass over the CSV: header, attribute columns, then row by row."""

    def __init__(self, path: str, spec: ReadSpec) -> None:
        self.p, self.spec = path, spec
        self.rnd = random.Random(0)

    def read(self) -> ReplayDataset:
        p, spec = self.p, self.spec
        with open_csv(p) as rows:
            header = read_header(p, rows, spec.time_column)
            where = RowFilter(header, spec.where)
            first = _sniff(rows, where)
            check_categorical(p, spec)
            cats = categorical_columns(p, header, first, spec.attributes, spec.categorical)
            names = attribute_columns(p, header, first, spec, where)
            check_measurements(p, header, data_kind(header), spec.time_column)
            names += [c for c in cats if c not in names]
            coder = Coder(header, cats)
            # filtered before coding: a category is matched by its name, and only the
            # categories of kept rows are known
            data = self._aggregate(header, names,
                                   coder.rows(itertools.chain(first, where.kept(rows))))
            data, categories = coder.finish(names, data)
        if not data:
            raise no_match(p, where) if spec.where else DataError(f"{p}: no data rows")
        if len(data) < 2:
            raise DataError(f"{p}: one distinct assignment of {', '.join(names)}: nothing varies",
                            hint="a replay needs at least 2; check --where and --attributes")
        return _dataset(p, header, names, data, spec, categories)

    def _aggregate(self, header: list[str], names: list[str],
                   rows: Iterator[tuple[int, list[str]]]) -> dict[Assignment, Repeats]:
        p, spec = self.p, self.spec
        col = {h: i for i, h in enumerate(header)}
        kind = data_kind(header)
        idx = [col[c] for c in names]
        t_i = col[spec.time_column]
        watch = spec.attributes is None
        levels: list[set[float]] = [set() for _ in names]
        data: dict[Assignment, Repeats] = {}
        occ = [col[c] for c in ("D", "o_a", "o_n", "o_d")] if kind == "occupancy" else []
        for line, row in rows:
            if len(row) != len(header):
                raise DataError(f"{p}:{line}: expected {len(header)} fields, got {len(row)}")
            point = attribute_values(p, line, row, idx, names, _FOUND if watch else None)
            T = number(p, line, spec.time_column, row[t_i])
            if not 0 < T <= MAX_TIME_S:
                raise DataError(f"{p}:{line}: {spec.time_column} must be > 0 and at most "
                                f"{MAX_TIME_S:g} s (got {T:g})")
            reps = data.get(point)
            if reps is None:
                self._check_new(line, names, point, levels, watch, len(data))
                reps = data[point] = Repeats()
            reps.add(_compact(p, line, row, col, T, kind, occ), self.rnd)
        return data

    def _check_new(self, line: int, names: Sequence[str], point: Assignment,
                   levels: list[set[float]], watch: bool, known: int) -> None:
        """Refuse a new assignment beyond the limits (levels only for columns not named)."""
        p, spec = self.p, self.spec
        if known >= spec.max_assignments:
            raise DataError(
                f"{p}:{line}: more than {spec.max_assignments} distinct assignments "
                f"(limit of --max-assignments)",
                hint="name fewer attribute columns with --attributes, keep fewer rows with "
                "--where, or raise the limit with --max-assignments N")
        if not watch:
            return
        for k, v in enumerate(point):
            levels[k].add(v)
            if len(levels[k]) > spec.max_levels:
                raise DataError(
                    f"{p}:{line}: column {names[k]!r} has more than {spec.max_levels} distinct "
                    f"values (limit of --max-levels for columns found without --attributes)",
                    hint="name the attribute columns with --attributes (an id, a timestamp or "
                    "a measured value is not an attribute), or raise the limit with "
                    "--max-levels N")


def _sniff(rows: Iterator[tuple[int, list[str]]], where: RowFilter
           ) -> list[tuple[int, list[str]]]:
    """The first ``SNIFF_ROWS`` rows the ``--where`` filters keep (they decide which columns
    are numeric; read again after). Rejected rows are not held: a filter that matches late in
    a large file keeps memory at these rows. None kept: none in the file."""
    first: list[tuple[int, list[str]]] = []
    for line, row in rows:
        if where.keeps(row):
            first.append((line, row))
            if len(first) >= SNIFF_ROWS:
                break
    return first


def _compact(p: str, line: int, row: list[str], col: Mapping[str, int], T: float,
             kind: str, occ: Sequence[int] = ()) -> Row:
    """The measurement of one row as floats (checked; the line number last)."""
    if kind == "direct":
        return (T, float(line))
    if kind == "derived":
        U = number(p, line, "U", row[col["U"]])
        D = number(p, line, "D", row[col["D"]])
        occupancies(T, U, D)  # checks U in [0, 1] and D > 0 now, not at the first run
        return (T, U, D, float(line))
    D, o_a, o_n, o_d = numbers(p, line, row, occ, ("D", "o_a", "o_n", "o_d"))
    if not D > 0 or min(o_a, o_n, o_d) < 0:  # T = D x (o_a + o_n + o_d) with T > 0
        raise DataError(f"{p}:{line}: D must be > 0 and o_a, o_n, o_d >= 0 (got D {D:g}, "
                        f"o_a {o_a:g}, o_n {o_n:g}, o_d {o_d:g})")
    u_text = row[col["U"]] if "U" in col else ""
    U = number(p, line, "U", u_text) if u_text != "" else math.nan
    return (T, D, U, o_a, o_n, o_d, float(line))


def _dataset(p: str, header: list[str], names: list[str], data: dict[Assignment, Repeats],
             spec: ReadSpec, categories: Mapping[str, tuple[str, ...]] | None = None
             ) -> ReplayDataset:
    kind = data_kind(header)
    levels = {c: sorted({a[i] for a in data}) for i, c in enumerate(names)}
    load = tuple(spec.load)
    cats = dict(categories or {})
    space = ResourceSpace(tuple(_attribute(c, levels[c], c in load, cats.get(c, ()))
                                for c in names), tuple(data))
    return ReplayDataset(p, space, "direct" if kind == "direct" else "occupancy",
                         Runs(names, kind, data), load, cats)


def _attribute(name: str, levels: Sequence[float], load: bool,
               categories: tuple[str, ...]) -> Attribute:
    """The attribute of a column; a categorical one carries its category names (its levels
    are their codes 1..k), so the planner's predictors treat the codes as names."""
    attr = infer_attribute(name, levels, load)
    return dataclasses.replace(attr, categories=categories) if categories else attr
