"""Property-based fuzz test of the three loaders a user feeds files to (issue 11, acceptance 3).

Inputs are the shipped files (replay CSVs, the example inventory, the design presets and a
design that extends one) mutated at random (byte flips, line deletions and duplications,
type swaps, unicode, huge and non-finite numbers, invalid UTF-8, BOM and CRLF) and random
text. The property, for every one of the ``TOTAL`` cases: the loader either loads the file
correctly (every number finite, the structure what it promises), or raises a ``NimoError``
whose message is one line; and the same file through the CLI entry point (in-process) then
exits 2 with exactly that one line on stderr, never a traceback.

Deterministic (``derandomize``) so that a failure reproduces; ``TOTAL`` cases in all (about
a minute of CPU; ``NIMO_FUZZ_CASES=N`` runs N per loader). ``--hypothesis-show-statistics``
shows how many loaded and how many were refused.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nimo.errors import NimoError
from nimo.predictors.options import PredictorOptions
from workbench.cli import main
from workbench.designs import load_design
from workbench.inventory import load_inventory
from workbench.replay import load_dataset

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOTAL = 10_000
CASES = {"csv": 3400, "inventory": 3300, "design": 3300}
assert sum(CASES.values()) == TOTAL
if os.environ.get("NIMO_FUZZ_CASES"):  # a quicker run while working: N cases per loader
    CASES = dict.fromkeys(CASES, int(os.environ["NIMO_FUZZ_CASES"]))



@functools.cache
def work() -> Path:
    """The directory the cases are written to (made on first use, removed after)."""
    path = Path(tempfile.mkdtemp(prefix="nimo-fuzz-"))
    # a CSV on which a design that loads can start a campaign (the CLI check of designs)
    (path / "design-data.csv").write_text("cpu,mem,T\n" + "".join(
        f"{1 + i % 3},{4 + i % 4},{10 + i % 12 + 0.1 * i}\n" for i in range(60)))
    return path


def _head(path: Path, lines: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:lines])


CSV_SEEDS = [_head(p, 40) for p in sorted((ROOT / "datasets").glob("*/*.csv"))] + [
    b"nodes,cpu,T\n1,2,10\n2,2,6\n4,2,3.5\n1,4,9\n2,4,5\n4,4,3\n",
    b"host,nodes,T,U,D\na,1,10,0.5,100\nb,2,6,0.4,100\na,4,3,0.9,50\n",
]
INVENTORY_SEEDS = [(ROOT / "inventories" / "example.yaml").read_bytes()]
DESIGN_SEEDS = [p.read_bytes() for p in sorted((ROOT / "designs").glob("*.yaml"))] + [
    b"extends: recommended\nstop: {max_runs: 6, error_pct: 5}\npredictors: {max_terms: 4}\n",
    b"extends: paper-default\ntest_size: 5\nerror: test_random\n",
]

TOKENS = [
    ".nan", ".inf", "-.inf", "nan", "NaN", "inf", "-Infinity", "1e999", "-1e999", "1.0e+400",
    "9" * 30, "9" * 5000, "-0", "0", "-1", "0.0", "1e-320", "true", "null", "~", "[]", "{}",
    "[1, [2]]", "{a: 1}", "''", '""', "'x'", "x", "é", "\u202e", "\U0001f600", "\x00", "\t",
    ",", ":", "- ", "&a", "*a", "!!binary x", "!!python/object:os.system", "<<: *a", "?",
    "2020-13-45", "0x1F", "0o7", "1_000", "%40", "{{", "}}", "{app_dir}", "../..", "~nouser/x",
    '"a\\0b"', '"line\\nbreak"', '"\\x1b[31m"', "/dev/null", "/", ".", "-",
]


@st.composite
def mutated(draw: st.DrawFn, seeds: Sequence[bytes]) -> bytes:
    """A seed file with 1-4 mutations, or (one case in ten) random text."""
    if draw(st.integers(0, 9)) == 0:
        if draw(st.booleans()):
            return draw(st.binary(max_size=400))
        return draw(st.text(max_size=400)).encode("utf-8", "surrogatepass")
    data = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        data = MUTATIONS[draw(st.sampled_from(sorted(MUTATIONS)))](draw, data)
    return data


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _flip(draw: st.DrawFn, data: bytes) -> bytes:
    if not data:
        return data
    i = draw(st.integers(0, len(data) - 1))
    return data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]


def _delete_line(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[draw(st.integers(0, len(lines) - 1))]
    return b"".join(lines)


def _duplicate_line(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    i = draw(st.integers(0, len(lines) - 1))
    return b"".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :])


def _swap_token(draw: st.DrawFn, data: bytes) -> bytes:
    """A word or number replaced by a token of another type (type swaps, huge numbers)."""
    words = data.replace(b",", b" , ").split(b" ")
    if not words:
        return data
    i = draw(st.integers(0, len(words) - 1))
    new = draw(st.sampled_from(TOKENS)).encode()
    tail = words[i][len(words[i].rstrip(b"\r\n")):]
    words[i] = new + tail
    return b" ".join(words).replace(b" , ", b",")


def _swap_value(draw: st.DrawFn, data: bytes) -> bytes:
    """The value of one ``key: value`` line (or one CSV cell) replaced by a token."""
    lines = _lines(data)
    i = draw(st.integers(0, len(lines) - 1))
    line = lines[i]
    end = line[len(line.rstrip(b"\r\n")):]
    new = draw(st.sampled_from(TOKENS)).encode()
    if b": " in line:
        lines[i] = line.split(b": ", 1)[0] + b": " + new + end
    else:
        cells = line.rstrip(b"\r\n").split(b",")
        cells[draw(st.integers(0, len(cells) - 1))] = new
        lines[i] = b",".join(cells) + end
    return b"".join(lines)


def _insert_text(draw: st.DrawFn, data: bytes) -> bytes:
    i = draw(st.integers(0, len(data)))
    text = draw(st.one_of(st.text(max_size=12), st.sampled_from(TOKENS)))
    return data[:i] + text.encode("utf-8", "surrogatepass") + data[i:]


def _invalid_utf8(draw: st.DrawFn, data: bytes) -> bytes:
    i = draw(st.integers(0, len(data)))
    return data[:i] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe9t\xe9", b"\xed\xa0\x80"])) \
        + data[i:]


def _truncate(draw: st.DrawFn, data: bytes) -> bytes:
    return data[: draw(st.integers(0, len(data)))]


def _bom_crlf(draw: st.DrawFn, data: bytes) -> bytes:
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data.replace(b"\n", b"\r\n")


MUTATIONS: dict[str, Callable[[st.DrawFn, bytes], bytes]] = {
    "flip": _flip, "delete_line": _delete_line, "duplicate_line": _duplicate_line,
    "swap_token": _swap_token, "swap_value": _swap_value, "insert_text": _insert_text,
    "invalid_utf8": _invalid_utf8, "truncate": _truncate, "bom_crlf": _bom_crlf,
}


# -- the property -------------------------------------------------------------------------
def all_finite(value: Any, depth: int = 0) -> bool:
    """Every float inside ``value`` (dataclasses, mappings, sequences) is finite."""
    if depth > 12:
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if is_dataclass(value) and not isinstance(value, type):
        return all(all_finite(getattr(value, f.name), depth + 1) for f in fields(value))
    if isinstance(value, dict):
        return all(all_finite(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return all(all_finite(v, depth + 1) for v in value)
    return True


def cli(argv: list[str]) -> tuple[int, list[str]]:
    """``nimo ARGV`` in-process: its exit status and stderr lines (stdout discarded)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue().splitlines()


def holds(data: bytes, name: str, load: Callable[[Path], Any], check: Callable[[Any], None],
          argv: Callable[[Path], list[str]], command: str) -> None:
    path = work() / name
    path.write_bytes(data)
    try:
        loaded = load(path)
    except NimoError as e:
        message = str(e)
        assert len(message.splitlines()) == 1 and message.isprintable(), message
        code, lines = cli(argv(path))
        assert (code, lines) == (2, [f"nimo {command}: error: {message}"]), (code, lines)
        event(f"refused: {type(e).__name__}")  # --hypothesis-show-statistics
        return
    check(loaded)
    event("loaded")


def check_dataset(ds: Any) -> None:
    names = list(ds.space.names)
    assert names and len(set(names)) == len(names)
    for a in ds.space.attributes:
        assert a.levels and all(math.isfinite(v) for v in a.levels)
    for assignment in ds.runs:
        for s in ds.runs[assignment]:
            assert math.isfinite(s.T) and s.T > 0 and all_finite(s)


def check_inventory(inv: Any) -> None:
    assert inv.hosts and inv.knobs and all_finite(inv)
    for knob in inv.knobs:
        assert knob.levels == tuple(sorted(set(knob.levels)))


def load_design_fully(path: Path) -> Any:
    """A design as a campaign takes it: the spec and its predictors' options."""
    spec = load_design(str(path))
    PredictorOptions.from_dict(spec.predictors)
    return spec


def check_design(spec: Any) -> None:
    assert spec.name and all_finite(spec)


def fuzz_settings(n: int) -> Any:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True)


@fuzz_settings(CASES["csv"])
@given(mutated(CSV_SEEDS))
def test_csv_loader_loads_or_says_one_line(data: bytes) -> None:
    holds(data, "data.csv", load_dataset, check_dataset,
          lambda p: ["replay", str(p), "--quiet"], "replay")


@fuzz_settings(CASES["inventory"])
@given(mutated(INVENTORY_SEEDS))
def test_inventory_loader_loads_or_says_one_line(data: bytes) -> None:
    holds(data, "inventory.yaml", load_inventory, check_inventory,
          lambda p: ["doctor", str(p)], "doctor")


@fuzz_settings(CASES["design"])
@given(mutated(DESIGN_SEEDS))
def test_design_loader_loads_or_says_one_line(data: bytes) -> None:
    holds(data, "design.yaml", load_design_fully, check_design,
          lambda p: ["replay", str(work() / "design-data.csv"), "--design", str(p), "--quiet",
                     "--external-test", "2"], "replay")


def teardown_module() -> None:
    if work.cache_info().currsize:
        shutil.rmtree(work())
