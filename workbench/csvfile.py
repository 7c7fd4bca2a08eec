"""The one CSV reader: rows with the line they end on, a checked header and numbers checked
with one-line errors naming the file, line and column (``DataError``).

UTF-8 only (a byte-order mark is dropped); CRLF, LF and quoted line breaks are read by the
csv module; a file that is not UTF-8 names its first bad line.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from nimo.errors import DataError

Rows = Iterator[tuple[int, list[str]]]
# An attribute's largest magnitude (and 1 / it the smallest but 0): the fits' terms
# (reciprocals, products of two attributes, squared in a fit) stay far inside float64.
MAX_ATTRIBUTE = 1e30


@contextmanager
def open_csv(p: str) -> Iterator[Rows]:
    """The non-blank rows of CSV file ``p`` as (line where the row ends, fields)."""
    try:
        # utf-8-sig: a byte-order mark is not part of the first column's name;
        # newline="": the csv module reads CRLF, LF and quoted line breaks itself
        fh = open(p, newline="", encoding="utf-8-sig")  # noqa: SIM115 - closed below
    except OSError as e:
        raise DataError(f"{p}: cannot read ({e.strerror or e})") from None
    with fh:
        yield csv_rows(p, csv.reader(fh))


def csv_rows(p: str, reader: Any) -> Iterator[tuple[int, list[str]]]:
    """(line number where the row ends, fields) of every non-blank row."""
    try:
        for row in reader:
            if row:
                yield reader.line_num, row
    except csv.Error as e:
        raise DataError(f"{p}:{reader.line_num}: malformed CSV ({e})") from None
    except UnicodeDecodeError:
        raise not_utf8(p) from None


def not_utf8(p: str) -> DataError:
    """The error naming the first line of ``p`` that is not UTF-8 (a character never spans
    lines, so lines decode on their own)."""
    with open(p, "rb") as fh:
        for line, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return DataError(f"{p}:{line}: not UTF-8 text (byte 0x{raw[e.start]:02x} at "
                                 f"column {e.start + 1})", hint="save the CSV as UTF-8")
    return DataError(f"{p}: not UTF-8 text", hint="save the CSV as UTF-8")


def read_header(p: str, rows: Iterator[tuple[int, list[str]]], time_column: str) -> list[str]:
    """The column names (stripped); each at most once."""
    first = next(rows, None)
    if first is None:
        raise DataError(f"{p}: empty file (expected a CSV header with a {time_column!r} column)")
    line, header = first[0], [h.strip() for h in first[1]]
    named = [i for i, name in enumerate(header, start=1) if name]
    unnamed = [i for i in range(1, len(header) + 1) if not header[i - 1]]
    if unnamed and named and unnamed[0] < named[-1]:  # trailing commas are fine; a gap is not
        raise DataError(f"{p}:{line}: column {unnamed[0]} has no name",
                        hint="name every column; an unnamed one would be dropped")
    seen: dict[str, int] = {}
    for i, name in enumerate(header, start=1):
        if name in seen and name:  # unnamed columns (trailing commas) are never used
            raise DataError(f"{p}:{line}: duplicate column {name!r} (columns {seen[name]} "
                            f"and {i})", hint="each column name once")
        seen[name] = i
    return header


def number(path: str, line: int, column: str, text: str, hint: str | None = None) -> float:
    """The finite number in cell ``text`` (``hint`` explains a cell that is not one)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise DataError(f"{path}:{line}: column {column!r} is not a number: {text!r}",
                        hint=hint) from None
    if not math.isfinite(value):
        raise DataError(f"{path}:{line}: column {column!r} is not a finite number: {text!r}",
                        hint="NaN and infinity are not measurements")
    return value


def numbers(p: str, line: int, row: list[str], idx: Sequence[int], names: Sequence[str],
            hint: str | None = None) -> tuple[float, ...]:
    """The finite numbers in columns ``idx`` (fast path; the checked one names the column)."""
    try:
        vals = tuple([float(row[i]) for i in idx])
        if all(map(math.isfinite, vals)):
            return vals
    except ValueError:
        pass
    return tuple(number(p, line, n, row[i], hint) for n, i in zip(names, idx, strict=True))


def attribute_values(p: str, line: int, row: list[str], idx: Sequence[int],
                     names: Sequence[str], hint: str | None = None) -> tuple[float, ...]:
    """``numbers`` of attribute columns, each checked by :func:`attribute_value`."""
    vals = numbers(p, line, row, idx, names, hint)
    for name, value in zip(names, vals, strict=True):
        attribute_value(p, line, name, value)
    return vals


def attribute_value(p: str, line: int, column: str, value: float) -> float:
    """``value`` if 0 or of magnitude ``1 / MAX_ATTRIBUTE .. MAX_ATTRIBUTE``; beyond, refused
    naming the line and column (a fit's terms would overflow: numpy warnings, no model)."""
    if value and not 1 / MAX_ATTRIBUTE <= abs(value) <= MAX_ATTRIBUTE:
        raise DataError(f"{p}:{line}: column {column!r}: {value:g} is out of range for an "
                        f"attribute", hint=f"valid: 0 or a magnitude from {1 / MAX_ATTRIBUTE:g} "
                        f"to {MAX_ATTRIBUTE:g}; rescale the column (bytes to GB, say)")
    return value


class RowFilter:
    """The ``--where`` filters COL=VALUE: a cell matches when its text is VALUE (``451``
    does not match ``451.0``, nor ``1.1`` match ``1.10``: a column of build or version
    names must not merge rows). A few of the values each filtered column holds in rejected
    rows are kept (``seen``) for the no-match error, which shows how they are written."""

    SHOWN = 5

    def __init__(self, header: Sequence[str], where: Sequence[tuple[str, str]]) -> None:
        col = {h: i for i, h in enumerate(header)}
        self.where = [(c, v) for c, v in where if c in col]
        self.filters = [(col[c], v) for c, v in self.where]
        self.seen: list[list[str]] = [[] for _ in self.filters]

    def keeps(self, row: Sequence[str]) -> bool:
        cells = [(row[i] if i < len(row) else "").strip() for i, _ in self.filters]
        if all(c == v for c, (_, v) in zip(cells, self.filters, strict=True)):
            return True
        for seen, c in zip(self.seen, cells, strict=True):
            if len(seen) <= self.SHOWN and c not in seen:  # one more: are there more?
                seen.append(c)
        return False

    def kept(self, rows: Rows) -> Rows:
        """The rows the filters keep (all without filters)."""
        if not self.filters:
            yield from rows
            return
        for line, row in rows:
            if self.keeps(row):
                yield line, row


def file_sha256(p: str) -> str:
    """The SHA-256 of file ``p``'s bytes (read in chunks), as hex."""
    digest = hashlib.sha256()
    try:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as e:
        raise DataError(f"{p}: cannot read ({e.strerror or e})") from None
    return digest.hexdigest()


def numeric_column(first: Sequence[tuple[int, list[str]]], i: int) -> bool:
    """Whether column ``i`` holds a number in any of ``first``: such a column is an attribute
    (its other cells must be numbers too); one without any is text and left out."""
    for _, row in first:
        try:
            float(row[i])
            return True
        except (ValueError, IndexError):
            continue
    return False
