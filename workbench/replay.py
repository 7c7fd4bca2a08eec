"""Replay workbench: answers "run G on assignment R" from a CSV of recorded measurements.

CSV format: one column per attribute; reserved columns ``T`` (seconds, required; another
column may be named with ``time_column``) and optional ``D``, ``U``, ``o_a``, ``o_n``, ``o_d``.
Without o_* but with U and D, occupancies come from Algorithm 3 steps 1-2 (no split of o_s).
Several rows for one assignment are repeated measurements; a replayed run returns one of them,
chosen by a generator seeded with (seed, run number), so a resumed campaign sees the same
answers as an uninterrupted one.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import ConfigError, DataError
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample, occupancies
from nimo.runner import RunnerBase
from nimo.space import Assignment, Attribute, ResourceSpace
from workbench.options import option

RESERVED = ("T", "D", "U", "o_a", "o_n", "o_d")
# bookkeeping columns of `nimo campaign samples`: never attributes unless named explicitly
METADATA = ("run", "purpose", "host", "cost_s")
OCCUPANCY_COLUMNS = ("o_a", "o_n", "o_d", "D")
_NEGATIVE = ("lat", "delay", "rtt")
_NETWORK = ("lat", "delay", "rtt", "bw", "bandwidth", "rate", "mbit", "net")
_STORAGE = ("disk", "storage", "iops", "io_")


def infer_attribute(name: str, levels: Sequence[float]) -> Attribute:
    """An Attribute with direction and resource guessed from the column name (latency, delay
    and RTT columns mean less capacity when larger; network/storage words set the resource)."""
    low = name.lower()
    direction = -1 if any(w in low for w in _NEGATIVE) else 1
    resource = (
        "network" if any(w in low for w in _NETWORK)
        else "storage" if any(w in low for w in _STORAGE)
        else "compute"
    )
    return Attribute(name, tuple(levels), direction, resource)


@dataclass(frozen=True)
class ReplayDataset:
    """Parsed measurements: per distinct assignment, the list of recorded samples."""

    path: str
    space: ResourceSpace
    kind: str
    runs: Mapping[Assignment, tuple[Sample, ...]]

    @property
    def assignments(self) -> list[Assignment]:
        return list(self.runs)

    def mean_T(self, a: Assignment) -> float:
        return float(np.mean([s.T for s in self.runs[a]]))

    def all_samples_s(self) -> float:
        """Learning time to measure every distinct assignment once (mean T of each)."""
        return float(sum(self.mean_T(a) for a in self.runs))


def _float(path: str, line: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise DataError(f"{path}:{line}: column {column!r} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise DataError(f"{path}:{line}: column {column!r} is not finite: {text!r}")
    return value


def load_dataset(
    path: str | Path,
    attributes: Sequence[str] | None = None,
    time_column: str = "T",
    where: Sequence[tuple[str, str]] = (),
) -> ReplayDataset:
    """Read and check a replay CSV; errors name the file, line and column."""
    p = str(path)
    header, rows = _read_csv(p, time_column)
    names = _attribute_columns(p, header, rows, attributes, time_column, where)
    has_occ = all(c in header for c in OCCUPANCY_COLUMNS)
    derive = not has_occ and "U" in header and "D" in header
    kind = "occupancy" if has_occ or derive else "direct"
    runs: dict[Assignment, list[Sample]] = {}
    for line, row in rows:
        if any((row.get(c) or "").strip() != v for c, v in where):
            continue
        if None in row or any(row.get(h) is None for h in header):
            raise DataError(f"{p}:{line}: expected {len(header)} fields")
        point = tuple(_float(p, line, c, row[c]) for c in names)
        T = _float(p, line, time_column, row[time_column])
        if T <= 0:
            raise DataError(f"{p}:{line}: {time_column} must be > 0 (got {T})")
        assignment = dict(zip(names, point, strict=True))
        runs.setdefault(point, []).append(_sample(p, line, row, assignment, T, kind, derive))
    if not runs:
        raise DataError(f"{p}: no data rows" + (" match the --where filters" if where else ""))
    levels = {c: sorted({a[i] for a in runs}) for i, c in enumerate(names)}
    space = ResourceSpace(tuple(infer_attribute(c, levels[c]) for c in names), tuple(runs))
    return ReplayDataset(p, space, kind, {a: tuple(s) for a, s in runs.items()})


Rows = list[tuple[int, dict[str, str]]]


def _read_csv(p: str, time_column: str) -> tuple[list[str], Rows]:
    """The stripped header and the (line number, row) pairs of CSV file ``p``."""
    try:
        fh = open(p, newline="")  # noqa: SIM115 - closed below
    except OSError as e:
        raise DataError(f"{p}: cannot read ({e.strerror})") from None
    with fh:
        reader = csv.DictReader(fh)
        try:
            if not reader.fieldnames:
                raise DataError(f"{p}: empty file (expected a CSV header with a {time_column!r} "
                                "column)")
            header = [h.strip() for h in reader.fieldnames]
            reader.fieldnames = header
            rows = list(enumerate(reader, start=2))
        except csv.Error as e:
            raise DataError(f"{p}:{reader.line_num}: malformed CSV ({e})") from None
    return header, rows


def _attribute_columns(p: str, header: list[str], rows: Rows, attributes: Sequence[str] | None,
                       time_column: str, where: Sequence[tuple[str, str]]) -> list[str]:
    """The attribute columns: those named (checked), else every numeric non-reserved one."""
    columns = "columns: " + ", ".join(header)
    if time_column not in header:
        raise DataError(f"{p}:1: no {time_column!r} column (the run time in seconds)",
                        hint=columns)
    for col, _ in where:
        if col not in header:
            raise DataError(f"{p}:1: --where column {col!r} not in the data", hint=columns)
    reserved = {*RESERVED, *METADATA, time_column}
    if attributes is None:
        attributes = [h for h in header if h not in reserved and _numeric_column(rows, h)]
    for a in attributes:
        if a not in header:
            raise DataError(f"{p}:1: attribute {a!r} not in the data", hint=columns)
        if a in reserved:
            raise DataError(f"{p}:1: {a!r} is a reserved column, not an attribute")
    if not attributes:
        raise DataError(f"{p}: no numeric attribute columns found",
                        hint="name them with --attributes")
    return list(attributes)


def _numeric_column(rows: Sequence[tuple[int, Mapping[str, str]]], column: str) -> bool:
    try:
        for _, row in rows[:50]:
            float(row[column])
        return True
    except (TypeError, ValueError, KeyError):
        return False


def _sample(path: str, line: int, row: Mapping[str, str], assignment: dict[str, float],
            T: float, kind: str, derive: bool) -> Sample:
    if kind == "direct":
        return Sample(assignment=assignment, T=T, cost_s=T, meta={"line": line})
    if derive:
        U = _float(path, line, "U", row["U"])
        D = _float(path, line, "D", row["D"])
        occ = occupancies(T, U, D)
        return Sample(assignment=assignment, T=T, D=D, U=U, o_a=occ.o_a, o_n=occ.o_n,
                      o_d=occ.o_d, cost_s=T, meta={"line": line, "split": "none"})
    vals = {c: _float(path, line, c, row[c]) for c in OCCUPANCY_COLUMNS}
    measured_U = _float(path, line, "U", row["U"]) if row.get("U") not in (None, "") else None
    return Sample(assignment=assignment, T=T, D=vals["D"], U=measured_U, o_a=vals["o_a"],
                  o_n=vals["o_n"], o_d=vals["o_d"], cost_s=T, meta={"line": line})


def external_test_set(dataset: ReplayDataset, count: int, seed: int) -> list[Assignment]:
    """``count`` random distinct assignments withheld from the planner (Section 4.1)."""
    n = len(dataset.runs)
    if count < 0:
        raise ConfigError(f"--external-test must be >= 0 (got {count})")
    if count >= n:
        raise ConfigError(
            f"{dataset.path}: {count} external test assignments asked for but the data has only "
            f"{n} distinct assignments", hint=f"use at most {max(n - 1, 0)}"
        )
    rng = np.random.default_rng([seed, 7919])
    picks = rng.choice(n, size=count, replace=False)
    return [dataset.assignments[int(i)] for i in sorted(picks)]


def _where(text: str) -> tuple[str, str]:
    col, sep, value = text.partition("=")
    if not sep or not col:
        raise argparse.ArgumentTypeError(f"expected COL=VALUE, got {text!r}")
    return col.strip(), value.strip()


@dataclass(frozen=True)
class ReplayOptions:
    """What a replay campaign is answered from: the CSV, how to read it, and the external
    test set withheld from the planner. Declared once: the fields give ``nimo replay``'s and
    ``nimo campaign submit``'s flags (``workbench.options``) and the campaign's stored
    dataset spec (``to_spec``/``from_spec``)."""

    path: str
    attributes: tuple[str, ...] | None = option(
        None, "--attributes", "comma-separated attribute columns (default: every numeric "
        "non-reserved column)")
    time_column: str = option("T", "--time-column", "run-time column (default T)")
    where: tuple[tuple[str, str], ...] = option(
        (), "--where", "keep only rows with COL equal to VALUE (repeatable)",
        metavar="COL=VALUE", parse=_where, repeat=True)
    external_test: int = option(
        30, "--external-test", "assignments withheld for reporting accuracy (default 30)",
        metavar="N", parse=int)
    seed: int = option(0, "--seed", parse=int)

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        set_("path", str(self.path))
        set_("attributes", _attribute_list(self.attributes))
        set_("where", tuple((str(c), str(v)) for c, v in self.where))
        set_("external_test", int(self.external_test))
        set_("seed", int(self.seed))

    def to_spec(self) -> dict[str, Any]:
        """The stored dataset spec (JSON): the arguments that rebuild the same runner."""
        return {
            "path": str(Path(self.path).resolve()),
            "attributes": None if self.attributes is None else list(self.attributes),
            "time_column": self.time_column,
            "where": [list(p) for p in self.where],
            "external_test": self.external_test,
            "seed": self.seed,
        }

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> ReplayOptions:
        return cls(**spec)


def _attribute_list(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """Attribute names from a comma-separated flag value or a list; None for every column."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        names = tuple(a.strip() for a in value.split(",") if a.strip())
        if not names:
            raise ConfigError("--attributes: empty list")
        return names
    return tuple(str(a) for a in value)


class ReplayRunner(RunnerBase):
    """Runner over recorded measurements, minus the withheld external test set."""

    def __init__(self, dataset: ReplayDataset, options: ReplayOptions) -> None:
        self.dataset = dataset
        self.options = options
        held = external_test_set(dataset, options.external_test, options.seed)
        self.external = [(dataset.space.as_dict(a), dataset.mean_T(a)) for a in held]
        excluded = set(held)
        self._space = dataset.space.restricted(
            [a for a in dataset.assignments if a not in excluded])

    @classmethod
    def open(cls, options: ReplayOptions) -> ReplayRunner:
        """Load the CSV ``options`` name and withhold its external test set."""
        dataset = load_dataset(options.path, options.attributes, options.time_column,
                               options.where)
        return cls(dataset, options)

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> ReplayRunner:
        """Rebuild the runner a campaign was launched with (its ``spec()``)."""
        return cls.open(ReplayOptions.from_spec(spec))

    @property
    def kind(self) -> str:
        return self.dataset.kind

    @property
    def space(self) -> ResourceSpace:
        return self._space

    @property
    def all_samples_s(self) -> float:
        return self.dataset.all_samples_s()

    def spec(self) -> dict[str, Any]:
        """The options, with the attribute columns as read (rebuilds the identical runner)."""
        names = tuple(self.dataset.space.names)
        return dataclasses.replace(self.options, attributes=names).to_spec()

    def run(self, request: RunRequest) -> RunOutcome:
        a = self._space.from_dict(request.assignment)
        recorded = self.dataset.runs.get(a) if a in self._space else None
        if not recorded:
            return RunOutcome(request, RunStatus.FAILED,
                              reason=f"no recorded measurement for {dict(request.assignment)}")
        rng = np.random.default_rng([self.options.seed, request.run])
        pick = recorded[int(rng.integers(len(recorded)))]
        return RunOutcome(request, RunStatus.DONE, sample=pick, host="replay")


def open_replay(*args: Any, **kwargs: Any) -> tuple[ReplayRunner, list[tuple[dict[str, float],
                                                                           float]]]:
    """``ReplayRunner.open(ReplayOptions(*args, **kwargs))`` and its external test set as
    [(assignment, mean measured T)]."""
    runner = ReplayRunner.open(ReplayOptions(*args, **kwargs))
    return runner, runner.external
