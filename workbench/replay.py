"""Replay workbench: answers "run G on assignment R" from a CSV of recorded measurements.

CSV format: one column per attribute; reserved columns ``T`` (seconds, required; another
column may be named with ``time_column``) and optional ``D``, ``U``, ``o_a``, ``o_n``, ``o_d``.
Without o_* but with U and D, occupancies come from Algorithm 3 steps 1-2 (no split of o_s).
Several rows for one assignment are repeated measurements; a replayed run returns one of them,
chosen by a generator seeded with (seed, run number), so a resumed campaign sees the same
answers as an uninterrupted one.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nimo.errors import ConfigError, DataError
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample, occupancies
from nimo.runner import SequentialRunMany
from nimo.space import Assignment, Attribute, ResourceSpace

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
    try:
        fh = open(p, newline="")  # noqa: SIM115 - closed below
    except OSError as e:
        raise DataError(f"{p}: cannot read ({e.strerror})") from None
    with fh:
        try:
            reader = csv.DictReader(fh)
            header = reader.fieldnames
            if not header:
                raise DataError(f"{p}: empty file (expected a CSV header with a {time_column!r} "
                                "column)")
            header = [h.strip() for h in header]
            reader.fieldnames = header
            rows = list(enumerate(reader, start=2))
        except csv.Error as e:
            raise DataError(f"{p}:{reader.line_num}: malformed CSV ({e})") from None
    if time_column not in header:
        raise DataError(f"{p}:1: no {time_column!r} column (the run time in seconds)",
                        hint="columns: " + ", ".join(header))
    for col, _ in where:
        if col not in header:
            raise DataError(f"{p}:1: --where column {col!r} not in the data",
                            hint="columns: " + ", ".join(header))
    reserved = {*RESERVED, *METADATA, time_column}
    if attributes is None:
        attributes = [h for h in header if h not in reserved and _numeric_column(rows, h)]
    else:
        for a in attributes:
            if a not in header:
                raise DataError(f"{p}:1: attribute {a!r} not in the data",
                                hint="columns: " + ", ".join(header))
            if a in reserved:
                raise DataError(f"{p}:1: {a!r} is a reserved column, not an attribute")
    if not attributes:
        raise DataError(f"{p}: no numeric attribute columns found",
                        hint="name them with --attributes")
    has_occ = all(c in header for c in OCCUPANCY_COLUMNS)
    derive = not has_occ and "U" in header and "D" in header
    kind = "occupancy" if has_occ or derive else "direct"

    runs: dict[Assignment, list[Sample]] = {}
    for line, row in rows:
        if any((row.get(c) or "").strip() != v for c, v in where):
            continue
        if None in row or any(row.get(h) is None for h in header):
            raise DataError(f"{p}:{line}: expected {len(header)} fields")
        a = tuple(_float(p, line, c, row[c]) for c in attributes)
        T = _float(p, line, time_column, row[time_column])
        if T <= 0:
            raise DataError(f"{p}:{line}: {time_column} must be > 0 (got {T})")
        sample = _sample(p, line, row, dict(zip(attributes, a, strict=True)), T, kind, derive)
        runs.setdefault(a, []).append(sample)
    if not runs:
        raise DataError(f"{p}: no data rows" + (" match the --where filters" if where else ""))
    levels = {c: sorted({a[i] for a in runs}) for i, c in enumerate(attributes)}
    space = ResourceSpace(tuple(infer_attribute(c, levels[c]) for c in attributes), tuple(runs))
    return ReplayDataset(p, space, kind, {a: tuple(s) for a, s in runs.items()})


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
    U = _float(path, line, "U", row["U"]) if row.get("U") not in (None, "") else None
    return Sample(assignment=assignment, T=T, D=vals["D"], U=U, o_a=vals["o_a"],
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


class ReplayRunner(SequentialRunMany):
    """Runner over recorded measurements, minus the withheld external test set."""

    def __init__(self, dataset: ReplayDataset, exclude: Sequence[Assignment] = (),
                 seed: int = 0) -> None:
        self.dataset = dataset
        self.seed = seed
        excluded = set(exclude)
        keep = [a for a in dataset.assignments if a not in excluded]
        self._space = dataset.space.restricted(keep)

    @property
    def space(self) -> ResourceSpace:
        return self._space

    def run(self, request: RunRequest) -> RunOutcome:
        a = self._space.from_dict(request.assignment)
        recorded = self.dataset.runs.get(a) if a in self._space else None
        if not recorded:
            return RunOutcome(request, RunStatus.FAILED,
                              reason=f"no recorded measurement for {dict(request.assignment)}")
        rng = np.random.default_rng([self.seed, request.run])
        pick = recorded[int(rng.integers(len(recorded)))]
        return RunOutcome(request, RunStatus.DONE, sample=pick, host="replay")

    @property
    def all_samples_s(self) -> float:
        return self.dataset.all_samples_s()

    @property
    def kind(self) -> str:
        return self.dataset.kind

    @classmethod
    def from_spec(cls, spec: Mapping[str, object]) -> ReplayRunner:
        """Rebuild the runner a campaign was launched with (see :func:`open_replay`)."""
        runner, _ = open_replay(**spec)  # type: ignore[arg-type]
        return runner


def open_replay(
    path: str,
    attributes: Sequence[str] | None = None,
    time_column: str = "T",
    where: Sequence[Sequence[str]] = (),
    external_test: int = 30,
    seed: int = 0,
) -> tuple[ReplayRunner, list[tuple[dict[str, float], float]]]:
    """Load ``path``, withhold the external test set, and return (runner, external) where
    external is [(assignment, mean measured T)]. The arguments form the campaign's stored
    dataset spec, so a resumed campaign rebuilds the identical runner."""
    pairs = [(str(c), str(v)) for c, v in where]
    dataset = load_dataset(path, attributes, time_column, pairs)
    held = external_test_set(dataset, int(external_test), int(seed))
    runner = ReplayRunner(dataset, exclude=held, seed=int(seed))
    runner.spec = {  # type: ignore[attr-defined]
        "path": str(Path(path).resolve()),
        "attributes": list(dataset.space.names),
        "time_column": time_column,
        "where": [list(p) for p in pairs],
        "external_test": int(external_test),
        "seed": int(seed),
    }
    external = [(dataset.space.as_dict(a), dataset.mean_T(a)) for a in held]
    return runner, external
