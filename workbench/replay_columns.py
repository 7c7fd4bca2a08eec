"""A replay CSV's header: which columns are attributes, which are measurements, and the
refusals that name a column (read before any data row is aggregated)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nimo.config import printable
from nimo.errors import DataError
from workbench.csvfile import RowFilter, numeric_column

RESERVED = ("T", "D", "U", "o_a", "o_n", "o_d")
# bookkeeping columns of `nimo campaign samples`: never attributes unless named explicitly
METADATA = ("run", "purpose", "host", "cost_s")
OCCUPANCY_COLUMNS = ("o_a", "o_n", "o_d", "D")
MAX_LEVELS = 50
MAX_ASSIGNMENTS = 50_000
# the measured columns each kind of data reads
_READ = {"occupancy": RESERVED, "derived": ("U", "D"), "direct": ()}


@dataclass(frozen=True)
class ReadSpec:
    """How to read one replay CSV (the options of ``load_dataset``)."""

    attributes: Sequence[str] | None = None
    time_column: str = "T"
    where: Sequence[tuple[str, str]] = ()
    load: Sequence[str] = ()
    max_levels: int = MAX_LEVELS
    max_assignments: int = MAX_ASSIGNMENTS
    categorical: Sequence[str] = ()


def data_kind(header: Sequence[str]) -> str:
    """occupancy (D, o_a, o_n, o_d), derived (U, D) or direct (T alone)."""
    if all(c in header for c in OCCUPANCY_COLUMNS):
        return "occupancy"
    return "derived" if "U" in header and "D" in header else "direct"


def check_measurements(p: str, header: Sequence[str], kind: str, time_column: str) -> None:
    """Refuse a D, U or o_* column that data of ``kind`` would silently not read, and a run
    time taken from a column it reads as another measurement."""
    measured = [c for c in _READ[kind] if c != "T"]
    if time_column in measured:
        raise DataError(f"{p}:1: --time-column {time_column!r} is read as a measurement of "
                        f"the {kind} data ({', '.join(measured)}), not as the run time",
                        hint="name the column of run times in seconds"
                        + (", e.g. --time-column T" if "T" in header else ""))
    unread = [c for c in RESERVED[1:]
              if c in header and c not in _READ[kind] and c != time_column]
    if unread:
        raise DataError(f"{p}:1: column {', '.join(unread)} would be ignored: read only in "
                        "the sets D, o_a, o_n, o_d (U optional) or U, D",
                        hint="add the missing columns of a set, or rename it")


def no_match(p: str, where: RowFilter) -> DataError:
    """The error for ``--where`` filters no row passes, with a few values their columns
    hold."""
    filters = " ".join(f"{c}={v}" for c, v in where.where)
    held = "; ".join(
        f"{c} holds " + ", ".join(v or "''" for v in seen[:where.SHOWN])
        + (", ..." if len(seen) > where.SHOWN else "")
        for (c, _), seen in zip(where.where, where.seen, strict=True) if seen)
    return DataError(printable(f"{p}: no data rows match the --where filters {filters}"),
                     hint=printable(held) if held else None)


def check_categorical(p: str, spec: ReadSpec) -> None:
    """Refuse a ``--categorical`` column that cannot be a categorical attribute: the run
    time, a reserved column, or one left out by ``--attributes``."""
    for c in spec.categorical:
        if c == spec.time_column:
            raise DataError(f"{p}:1: --categorical column {c!r} is the run-time column, not "
                            "an attribute, and cannot be categorical",
                            hint="name attribute columns of categories")
        if c in RESERVED:
            raise DataError(f"{p}:1: --categorical column {c!r} is a reserved column, not an "
                            "attribute", hint="name attribute columns of categories")
        if spec.attributes is not None and c not in spec.attributes:
            raise DataError(f"{p}:1: --categorical column {c!r} is not among --attributes",
                            hint=printable("valid: " + ", ".join(spec.attributes)))


def attribute_columns(p: str, header: list[str], kept: Sequence[tuple[int, list[str]]],
                      spec: ReadSpec, where: RowFilter) -> list[str]:
    """The attribute columns: those named (checked), else every column with a number in
    ``kept`` (the sniffed rows the filters keep) but the reserved ones."""
    columns = printable("columns: " + ", ".join(header))
    if spec.time_column not in header:
        raise DataError(f"{p}:1: no {spec.time_column!r} column (the run time in seconds)",
                        hint=columns)
    for c, _ in spec.where:
        if c not in header:
            raise DataError(f"{p}:1: --where column {c!r} not in the data", hint=columns)
    if spec.where and not kept:
        raise no_match(p, where)
    reserved = {*RESERVED, *METADATA, spec.time_column}
    attributes = spec.attributes
    if attributes is None:
        attributes = [h for i, h in enumerate(header)
                      if h and h not in reserved and numeric_column(kept, i)]
    for a in attributes:
        if a not in header:
            raise DataError(f"{p}:1: attribute {a!r} not in the data", hint=columns)
        if a in reserved:
            raise DataError(f"{p}:1: {a!r} is a reserved column, not an attribute")
    if not attributes:
        raise DataError(f"{p}: no numeric attribute columns found",
                        hint="name them with --attributes")
    for a in spec.load:
        if a not in attributes:
            raise DataError(f"{p}:1: --load column {a!r} is not an attribute column",
                            hint=printable("attributes: " + ", ".join(attributes)))
    return list(attributes)
