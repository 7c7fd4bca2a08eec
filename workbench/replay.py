"""Replay workbench: answers "run G on assignment R" from a CSV of recorded measurements.

CSV format: one column per attribute; reserved columns ``T`` (seconds, required; another
column may be named with ``time_column``) and optional ``D``, ``U``, ``o_a``, ``o_n``, ``o_d``.
Without o_* but with U and D, occupancies come from Algorithm 3 steps 1-2 (no split of o_s).
Several rows for one assignment are repeated measurements; a replayed run returns one of them,
chosen by a generator seeded with (seed, run number), so a resumed campaign sees the same
answers as an uninterrupted one. The CSV is read streaming, with limits on the levels of
columns found without ``--attributes`` and on the distinct assignments
(``workbench.replay_data``).

Withheld from the planner: the external test set (it only scores the model: MAPE and 90%
coverage) and, with ``--calibration-split N``, N more assignments that only calibrate the
final model's intervals. Neither is ever used for the other's purpose.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nimo.errors import ConfigError
from nimo.records import RunOutcome, RunRequest, RunStatus
from nimo.runner import RunnerBase
from nimo.space import Assignment, ResourceSpace
from workbench.csvfile import file_sha256
from workbench.options import option, optional_names
from workbench.replay_categories import named
from workbench.replay_columns import (
    MAX_ASSIGNMENTS,
    MAX_LEVELS,
    METADATA,
    OCCUPANCY_COLUMNS,
    RESERVED,
)
from workbench.replay_data import ReplayDataset, infer_attribute, load_dataset
from workbench.replay_scale import (
    PICKED_REPEATS,
    Bound,
    aggregate,
    parse_bound,
    parse_repeats,
    pick_index,
    picked_repeat,
    split_by_bound,
)

__all__ = [
    "METADATA", "OCCUPANCY_COLUMNS", "RESERVED", "ReplayDataset", "ReplayOptions",
    "ReplayRunner", "calibration_set", "external_test_set", "infer_attribute", "load_dataset",
    "open_replay",
]


EXTERNAL_TEST = 30  # the paper's external test set (Section 4.1)
EXTERNAL_SHARE = 5  # ... or a fifth of the distinct assignments, when that is fewer


def default_external_count(assignments: int) -> int:
    """The external test set's size when none is asked for: 30, or a fifth of the distinct
    assignments when that is fewer (30 of 48 would leave the planner 18)."""
    return min(EXTERNAL_TEST, assignments // EXTERNAL_SHARE)


def external_test_set(dataset: ReplayDataset, count: int | None, seed: int
                      ) -> list[Assignment]:
    """``count`` (None: :func:`default_external_count`) random distinct assignments
    withheld from the planner (Section 4.1)."""
    n = len(dataset.runs)
    if count is None:
        count = default_external_count(n)
    if count < 0:
        raise ConfigError(f"--external-test must be >= 0 (got {count})")
    if count >= n:
        raise ConfigError(
            f"{dataset.path}: {count} external test assignments asked for but the data has only "
            f"{n} distinct assignments",
            hint=f"use --external-test N with N at most {max(n - 1, 0)}")
    rng = np.random.default_rng([seed, 7919])
    picks = rng.choice(n, size=count, replace=False)
    return [dataset.assignments[int(i)] for i in sorted(picks)]


def calibration_set(dataset: ReplayDataset, count: int, seed: int,
                    exclude: Sequence[Assignment]) -> list[Assignment]:
    """``count`` random distinct assignments, none in ``exclude`` (the external test set),
    withheld from the planner to calibrate the final model's intervals only."""
    if count < 0:
        raise ConfigError(f"--calibration-split must be >= 0 (got {count})")
    if count == 0:
        return []
    skip = set(exclude)
    pool = [a for a in dataset.assignments if a not in skip]
    if count >= len(pool):
        raise ConfigError(
            f"{dataset.path}: {count} calibration assignments asked for but only {len(pool)} "
            "remain besides the external test set", hint=f"use at most {max(len(pool) - 1, 0)}")
    rng = np.random.default_rng([seed, 7927])
    return [pool[int(i)] for i in sorted(rng.choice(len(pool), size=count, replace=False))]


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
    external_test: int | None = option(
        None, "--external-test", f"assignments withheld for reporting accuracy (default "
        f"{EXTERNAL_TEST}, or a fifth of the distinct assignments when that is fewer)",
        metavar="N", parse=int)
    seed: int = option(0, "--seed", parse=int)
    load: tuple[str, ...] = option(
        (), "--load", "comma-separated attribute columns that are load, not capacity (input "
        "size, iterations, job parameters: more = more work)", metavar="COL,...")
    calibration_split: int = option(
        0, "--calibration-split", "assignments withheld from the planner to calibrate the "
        "final model's intervals (default 0: the model's own leave-one-out calibration); "
        "the external test set never calibrates", metavar="N", parse=int)
    max_levels: int = option(
        MAX_LEVELS, "--max-levels", f"refuse a column found without --attributes with more "
        f"distinct values (default {MAX_LEVELS})", metavar="N", parse=int)
    max_assignments: int = option(
        MAX_ASSIGNMENTS, "--max-assignments", f"refuse data with more distinct assignments "
        f"(default {MAX_ASSIGNMENTS})", metavar="N", parse=int)
    categorical: tuple[str, ...] = option(
        (), "--categorical", "comma-separated attribute columns of categories (instance "
        "family, storage kind, variant); a column named in --attributes whose values are not "
        "numbers is categorical anyway", metavar="COL,...")
    extrapolate: Bound | None = option(
        None, "--extrapolate", "train only on assignments inside the bound and score on every "
        "assignment outside it (replaces --external-test)", metavar="'COL<=VALUE'",
        parse=parse_bound)
    repeats: str | None = option(
        None, "--repeats", "how repeated measurements of an assignment are aggregated: a run "
        "replays the fastest (min) or median one, mean keeps a random pick; the external T is "
        "that aggregate (default: random pick, mean)", metavar="min|median|mean",
        parse=parse_repeats)
    # SHA-256 of the CSV's bytes when the campaign was made (no flag): resume refuses
    # another CSV (workbench.fingerprint); None in campaigns stored before it was kept
    sha256: str | None = None

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        set_("path", str(self.path))
        set_("attributes", optional_names(self.attributes, "--attributes",
                                          "every numeric non-reserved column"))
        set_("where", tuple((str(c), str(v)) for c, v in self.where))
        set_("external_test", None if self.external_test is None else int(self.external_test))
        set_("seed", int(self.seed))
        set_("load", optional_names(self.load, "--load", "none") or ())
        set_("categorical", optional_names(self.categorical, "--categorical", "none") or ())
        for name in ("calibration_split", "max_levels", "max_assignments"):
            set_(name, int(getattr(self, name)))
        try:
            set_("extrapolate", parse_bound(self.extrapolate))
            set_("repeats", parse_repeats(self.repeats))
        except argparse.ArgumentTypeError as e:
            raise ConfigError(f"replay options: {e}") from None
        if self.seed < 0:
            raise ConfigError(f"--seed must be >= 0 (got {self.seed})")
        for flag, value in (("--max-levels", self.max_levels),
                            ("--max-assignments", self.max_assignments)):
            if value < 1:
                raise ConfigError(f"{flag} must be >= 1 (got {value})")

    def to_spec(self) -> dict[str, Any]:
        """The stored dataset spec (JSON): the arguments that rebuild the same runner."""
        return {
            "path": str(Path(self.path).resolve()),
            "attributes": None if self.attributes is None else list(self.attributes),
            "time_column": self.time_column,
            "where": [list(p) for p in self.where],
            "external_test": self.external_test,
            "seed": self.seed,
            "load": list(self.load),
            "calibration_split": self.calibration_split,
            "max_levels": self.max_levels,
            "max_assignments": self.max_assignments,
            # later additions, only when set (the stored spec of older campaigns unchanged)
            **({"extrapolate": str(self.extrapolate)} if self.extrapolate else {}),
            **({"repeats": self.repeats} if self.repeats else {}),
            **({"categorical": list(self.categorical)} if self.categorical else {}),
            **({"sha256": self.sha256} if self.sha256 else {}),
        }

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> ReplayOptions:
        return cls(**spec)


class ReplayRunner(RunnerBase):
    """Runner over recorded measurements, minus the withheld external test set."""

    def __init__(self, dataset: ReplayDataset, options: ReplayOptions) -> None:
        self.dataset = dataset
        self.options = options
        if options.extrapolate is not None:
            held = split_by_bound(dataset.assignments, dataset.space.names,
                                  options.extrapolate, dataset.path)[1]
        else:
            held = external_test_set(dataset, options.external_test, options.seed)
        self.external = [(dataset.space.as_dict(a), self.measured_T(a)) for a in held]
        calib = calibration_set(dataset, options.calibration_split, options.seed, held)
        # read by nimo.campaign.lifecycle: calibrates the final model's intervals only
        self.calibration = [(dataset.space.as_dict(a), self.measured_T(a)) for a in calib]
        excluded = {*held, *calib}
        self._space = dataset.space.restricted(
            [a for a in dataset.assignments if a not in excluded])

    @classmethod
    def open(cls, options: ReplayOptions) -> ReplayRunner:
        """Load the CSV ``options`` name and withhold its external test set. The CSV's
        SHA-256 is taken before it is read: one changed while read is refused on resume."""
        sha256 = options.sha256 or file_sha256(options.path)
        dataset = load_dataset(options.path, options.attributes, options.time_column,
                               options.where, load=options.load,
                               max_levels=options.max_levels,
                               max_assignments=options.max_assignments,
                               categorical=options.categorical)
        return cls(dataset, dataclasses.replace(options, sha256=sha256))

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
        """Learning time to measure every distinct assignment of the data once (the withheld
        ones too), as runs replay it: the repeat ``--repeats min|median`` picks, else the
        mean of the repeats (a random pick's expected time)."""
        repeats = self.options.repeats
        if repeats is None or repeats not in PICKED_REPEATS:
            return self.dataset.all_samples_s()
        picked = ([s.T for s in self.dataset.runs[a]] for a in self.dataset.assignments)
        return float(sum(t[picked_repeat(t, repeats)] for t in picked))

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
        k = pick_index([s.T for s in recorded], self.options.repeats)
        if k is None:
            rng = np.random.default_rng([self.options.seed, request.run])
            k = int(rng.integers(len(recorded)))
        return RunOutcome(request, RunStatus.DONE, sample=recorded[k], host="replay")

    @property
    def categorical(self) -> tuple[str, ...]:
        return tuple(self.dataset.categories)

    @property
    def numeric_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.dataset.space.names if n not in self.dataset.categories)

    def row(self, assignment: Mapping[str, float]) -> dict[str, Any]:
        """An assignment with each categorical attribute's level as its category string
        (``replay_categories.named``), the other values as floats."""
        return named({n: float(v) for n, v in assignment.items()}, self.dataset.categories)

    def measured_T(self, a: Assignment) -> float:
        """The T an assignment is scored against: the mean of its repeats, or their
        ``--repeats`` aggregate."""
        if self.options.repeats is None:
            return self.dataset.mean_T(a)
        return aggregate([s.T for s in self.dataset.runs[a]], self.options.repeats)


def open_replay(*args: Any, **kwargs: Any) -> tuple[ReplayRunner, list[tuple[dict[str, float],
                                                                           float]]]:
    """``ReplayRunner.open(ReplayOptions(*args, **kwargs))`` and its external test set as
    [(assignment, mean measured T)]."""
    runner = ReplayRunner.open(ReplayOptions(*args, **kwargs))
    return runner, runner.external
