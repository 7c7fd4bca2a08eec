"""The config toolkit: every kind accepts good values and rejects bad ones in one line naming
the file, the key path and what would be valid; sections declare keys, kinds and defaults once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nimo.config import (
    AbsPath,
    Argv,
    Boolean,
    Checker,
    Choice,
    Integer,
    Nested,
    Number,
    Text,
    option,
    option_names,
    section,
    to_dict,
    valid_hint,
)
from nimo.errors import ConfigError, FileAccessError
from workbench.errors import InventoryError
from workbench.yamlfile import read_yaml

CK = Checker("f.yaml")


def rejects(kind, value, key: str = "a.b") -> str:
    with pytest.raises(ConfigError) as e:
        kind.parse(CK, key, value)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"f.yaml: {key}")
    return msg


GOOD = [
    (Text(), "x", "x"),
    (Text(re.compile(r"^[a-z]+$")), "abc", "abc"),
    (AbsPath(), "/srv", "/srv"),
    (Number(0, 10), 3, 3.0),
    (Number(0, lo_open=True), 0.5, 0.5),
    (Integer(1, 5), 5, 5),
    (Integer(0), 10**9, 10**9),
    (Boolean(), False, False),
    (Choice(("a", "b")), "b", "b"),
    (Argv(("x",)), ["run", "{x}", 3, "{{lit}}"], ("run", "{x}", "3", "{{lit}}")),
]


@pytest.mark.parametrize("kind,value,expected", GOOD)
def test_each_kind_accepts_and_converts_a_good_value(kind, value, expected):
    got = kind.parse(CK, "a.b", value)
    assert got == expected and type(got) is type(expected)


BAD = [
    # (kind, bad value, fragment of the message, fragment of the hint or None)
    (Text(), "  ", "must be a non-empty string, got str", None),
    (Text(), None, "must be a non-empty string, got nothing", None),
    (Text(re.compile(r"^[a-z]+$"), "valid: lower case"), "A1", "'A1' is not valid",
     "valid: lower case"),
    (Text(re.compile(r"^[a-z]+$")), "A1", "'A1' is not valid", "must match ^[a-z]+$"),
    # $ matches before a final newline: the whole value must match
    (Text(re.compile(r"^[a-z]+$"), "valid: lower case"), "abc\n", "'abc\\n' is not valid",
     "valid: lower case"),
    (AbsPath(), "srv", "'srv' is not an absolute path", "valid: a path starting with /"),
    # /proc/mounts and the hosts' marker files escape these: a run would fail much later
    (AbsPath(), "/tmp/w\nx", "'/tmp/w\\nx' contains a backslash or a control character",
     "valid: a path without backslashes, tabs or newlines"),
    (AbsPath(), "/srv/a\\b", "contains a backslash or a control character", None),
    (AbsPath(), "/srv/a\tb", "contains a backslash or a control character", None),
    (Number(0, 10), 11, "11 is out of range", "valid: >= 0 and <= 10"),
    (Number(0, lo_open=True), 0, "0 is out of range", "valid: > 0"),
    (Number(), True, "must be a number, got bool", None),
    (Number(), "1", "must be a number, got str", None),
    # YAML 1.1 reads 1e308 (no dot) as a string: the hint says how to write it
    (Number(), "1e308", "must be a number, got str", "YAML reads '1e308' as text; write "
     "1.0e+308"),
    (Number(), "1.0e5", "must be a number, got str", "YAML reads '1.0e5' as text; write "
     "1.0e+5"),
    # non-finite numbers (YAML .nan, .inf) are never a level, a timeout or a budget
    (Number(), float("nan"), "nan is not a finite number", "valid: a finite number"),
    (Number(0, lo_open=True), float("inf"), "inf is not a finite number", None),
    (Number(), float("-inf"), "-inf is not a finite number", None),
    (Number(), 10**400, "a number too large is not a finite number", None),
    (Integer(1), float("nan"), "must be an integer, got float", None),
    (Integer(1), 2**63, f"{2**63} is out of range", f"valid: 1..{2**63 - 1}"),
    (Integer(1, 5), 6, "6 is out of range", "valid: 1..5"),
    (Integer(2), 1, "1 is out of range", "valid: >= 2"),
    (Integer(), 1.5, "must be an integer, got float", None),
    (Integer(), True, "must be an integer, got bool", None),
    (Boolean(), "yes", "must be true or false, got str", None),
    (Choice(("a", "b")), "c", "'c' is not valid", "valid: a, b"),
    (Argv(("x",)), "run x", "must be a non-empty list of strings (argv)", "e.g. ["),
    (Argv(("x",)), [], "must be a non-empty list of strings (argv)", None),
]


@pytest.mark.parametrize("kind,value,message,hint", BAD)
def test_each_kind_rejects_a_bad_value_in_one_line(kind, value, message, hint):
    msg = rejects(kind, value)
    assert message in msg
    if hint:
        assert f"({hint}" in msg


def test_argv_items_are_checked_with_their_index():
    assert "a.b[1]: unknown placeholder {y} (valid: x)" in rejects(Argv(("x",)), ["r", "{y}"])
    assert "a.b[0]: bad placeholder syntax" in rejects(Argv(("x",)), ["{x"])
    assert "a.b[1]: must be a string, got list" in rejects(Argv(("x",)), ["r", ["x"]])


@section
class Inner:
    level: float = option(Number(0, 1), default=0.5)
    note: str | None = option(Text(), default=None)


@section
class Outer:
    name: str = option(Text())
    mode: str = option(Choice(("fast", "slow")), default="fast")
    count: int = option(Integer(1), default=3)
    argv: tuple[str, ...] = option(Argv(("x",)), default=("run",))
    inner: Inner = option(Nested(Inner), default_factory=Inner)


def test_section_fills_declared_defaults():
    got = CK.section(Outer, {"name": "n"}, "top")
    assert got == Outer(name="n", mode="fast", count=3, argv=("run",), inner=Inner(0.5, None))
    assert CK.section(Outer, {"name": "n", "inner": {"note": None}}).inner.note is None


def test_section_parses_every_key_and_nested_sections():
    raw = {"name": "n", "mode": "slow", "count": 7, "argv": ["r", "{x}"],
           "inner": {"level": 1, "note": "hi"}}
    got = CK.section(Outer, raw, "top")
    assert got == Outer("n", "slow", 7, ("r", "{x}"), Inner(1.0, "hi"))
    assert to_dict(got) == {"name": "n", "mode": "slow", "count": 7, "argv": ["r", "{x}"],
                            "inner": {"level": 1.0, "note": "hi"}}
    assert CK.section(Outer, to_dict(got), "top") == got


def test_unknown_key_lists_the_declared_keys():
    assert option_names(Outer) == ("name", "mode", "count", "argv", "inner")
    with pytest.raises(ConfigError) as e:
        CK.section(Outer, {"name": "n", "inner": {"levle": 1}}, "top")
    assert str(e.value) == "f.yaml: top.inner.levle: unknown key (valid: level, note)"


def test_required_key_and_explicit_null():
    with pytest.raises(ConfigError, match=r"^f\.yaml: top\.name: is required$"):
        CK.section(Outer, {"mode": "slow"}, "top")
    with pytest.raises(ConfigError, match="top.count: must be an integer, got nothing"):
        CK.section(Outer, {"name": "n", "count": None}, "top")
    with pytest.raises(ConfigError, match="top: must be a mapping, got list"):
        CK.section(Outer, [1], "top")


def test_kinds_can_be_swapped_for_one_parse():
    wider = {"argv": Argv(("x", "y")), "inner": Nested(Inner, {"level": Number(0, 5)})}
    got = CK.section(Outer, {"name": "n", "argv": ["{y}"], "inner": {"level": 4}}, "", wider)
    assert got.argv == ("{y}",) and got.inner.level == 4.0
    with pytest.raises(ConfigError, match=r"unknown placeholder \{y\}"):
        CK.section(Outer, {"name": "n", "argv": ["{y}"]})


def test_checker_names_source_and_raises_its_error_class():
    with pytest.raises(InventoryError, match=r"^inv\.yaml: k: 'z' is not valid \(valid: a\)$"):
        Choice(("a",)).parse(Checker("inv.yaml", InventoryError), "k", "z")
    with pytest.raises(ConfigError, match=r"^k: 'z' is not valid"):
        Choice(("a",)).parse(Checker(), "k", "z")
    assert valid_hint([1, "b"]) == "valid: 1, b"


def test_read_yaml_names_file_and_line(tmp_path: Path):
    good = tmp_path / "good.yaml"
    good.write_text("a: [1, 2]\n")
    assert read_yaml(good) == {"a": [1, 2]}
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: 1\nb: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:3: malformed YAML: "):
        read_yaml(bad, "design")
    with pytest.raises(FileAccessError, match=r"missing\.yaml: cannot read design: "):
        read_yaml(tmp_path / "missing.yaml", "design")
    with pytest.raises(InventoryError, match="cannot read inventory"):
        read_yaml(tmp_path / "missing.yaml", "inventory", unreadable=InventoryError)
