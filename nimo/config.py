"""Options declared once, checked with one-line errors: the toolkit for every YAML config.

A section of a config file is a frozen dataclass decorated with :func:`section` whose fields
are declared with :func:`option`. That one line per key gives everything else: the kind checks
the value, the default is the YAML default (none = required, ``None`` = optional), the field
names are the valid keys, and :func:`to_dict` writes the section back. :class:`Checker` parses
a section (``Checker.section``) and offers the same checks to hand-written parsers. No I/O: the
caller reads the YAML.

Every error is ONE line ``FILE: KEY.PATH: what is wrong (valid: ...)`` raised as the checker's
error class (``ConfigError`` unless told otherwise, e.g. ``workbench``'s ``InventoryError``)::

    from nimo.config import (Checker, Choice, Integer, Nested, Number, Text, option, section,
                             to_dict)

    @section
    class StopRule:
        error_pct: float = option(Number(lo=0), default=10.0)
        min_samples: int = option(Integer(lo=1), default=5)
        max_runs: int | None = option(Integer(lo=1), default=None)   # optional

    @section
    class Design:
        name: str = option(Text())                                   # required
        traversal: str = option(Choice(("round_robin", "improvement")), default="round_robin")
        stop: StopRule = option(Nested(StopRule), default_factory=StopRule)

    ck = Checker("designs/x.yaml")
    ck.section(Design, {"name": "a", "stop": {"error_pct": 5}})
    #  -> Design(name='a', traversal='round_robin', stop=StopRule(error_pct=5.0, ...))
    ck.section(Design, {"name": "a", "stop": {"eror_pct": 5}})
    #  ConfigError: designs/x.yaml: stop.eror_pct: unknown key
    #               (valid: error_pct, min_samples, max_runs)
    ck.section(Design, {"name": "a", "traversal": "zigzag"})
    #  ConfigError: designs/x.yaml: traversal: 'zigzag' is not valid
    #               (valid: round_robin, improvement)
    to_dict(Design("a"))  # {'name': 'a', 'traversal': 'round_robin', 'stop': {'error_pct': 10.0,
                        #  'min_samples': 5, 'max_runs': None}}

A value no shipped kind describes gets a small :class:`Kind` subclass whose ``parse`` checks
it with ``ck.fail(...)``; ``Checker.section(..., kinds={name: kind})`` swaps a field's kind for
one parse (e.g. an argv whose placeholders depend on other keys).
"""

from __future__ import annotations

import math
import re
import string
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields, is_dataclass
from typing import Any, TypeVar, dataclass_transform

from nimo.errors import ConfigError, NimoError

T = TypeVar("T")
_KIND = "nimo.config.kind"
MAX_INTEGER = 2**63 - 1  # what a store's BIGINT holds


def valid_hint(values: Sequence[object]) -> str:
    """``valid: a, b, c`` for an error's hint."""
    return "valid: " + ", ".join(str(v) for v in values)


def printable(text: str) -> str:
    """``text`` with every character that is not printable (line breaks, tabs, control and
    separator characters) written as its Python escape: an error stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def type_name(value: Any) -> str:
    """What a YAML value is, for messages (``nothing`` for null)."""
    return "nothing" if value is None else type(value).__name__


def join_key(key: str, name: str) -> str:
    """The key path of ``name`` inside ``key`` (``hosts[1]`` + ``role`` -> ``hosts[1].role``)."""
    return f"{key}.{name}" if key else name


class Checker:
    """Checks values from one file; every error names ``source`` and the key path."""

    def __init__(self, source: str = "",
                 error: Callable[..., NimoError] = ConfigError) -> None:
        self.source = source
        self.error = error

    def fail(self, key: str, message: str, hint: str | None = None) -> NimoError:
        """The error (to raise) for ``key``: ``SOURCE: KEY: message (hint)``, on one line
        whatever the keys and values hold (control characters escaped)."""
        where = ": ".join(part for part in (self.source, key) if part)
        text = f"{where}: {message}" if where else message
        return self.error(printable(text), hint=None if hint is None else printable(hint))

    def mapping(self, value: Any, key: str, allowed: Sequence[str]) -> Mapping[str, Any]:
        """``value`` as a mapping whose keys are all in ``allowed``."""
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping, got {type_name(value)}")
        for name in value:
            if name not in allowed:
                raise self.fail(join_key(key, str(name)), "unknown key", valid_hint(allowed))
        return value

    def required(self, m: Mapping[str, Any], key: str, name: str) -> Any:
        """``m[name]``, which must be present and not null."""
        if m.get(name) is None:
            raise self.fail(join_key(key, name), "is required")
        return m[name]

    def non_empty_list(self, value: Any, key: str, what: str = "list") -> list[Any]:
        """``value`` as a non-empty list (``what`` names it in the message)."""
        if not isinstance(value, list) or not value:
            raise self.fail(key, f"must be a non-empty {what}, got {type_name(value)}")
        return value

    def section(self, cls: type[T], raw: Any, key: str = "",
                kinds: Mapping[str, Kind] | None = None) -> T:
        """Parse mapping ``raw`` at ``key`` into the :func:`section` class ``cls``."""
        m = self.mapping(raw, key, option_names(cls))
        values = {}
        for f in _options(cls):
            kind = (kinds or {}).get(f.name) or f.metadata[_KIND]
            values[f.name] = self._value(f, kind, m, join_key(key, f.name))
        return cls(**values)

    def _value(self, f: Field[Any], kind: Kind, m: Mapping[str, Any], key: str) -> Any:
        given = m.get(f.name)
        if given is None:
            if f.default is not MISSING and (f.name not in m or f.default is None):
                return f.default
            if f.default_factory is not MISSING and f.name not in m:
                return f.default_factory()
            if f.default is MISSING and f.default_factory is MISSING:
                raise self.fail(key, "is required")
        return kind.parse(self, key, given)


# ----------------------------------------------------------------------------------- kinds
class Kind(ABC):
    """How one option's value is checked and converted."""

    @abstractmethod
    def parse(self, ck: Checker, key: str, value: Any) -> Any:
        """The checked value, or ``raise ck.fail(key, ...)``."""


@dataclass(frozen=True)
class Text(Kind):
    """A non-empty string, optionally matching ``pattern`` (``hint`` says what is valid)."""

    pattern: re.Pattern[str] | None = None
    hint: str = ""

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ck.fail(key, f"must be a non-empty string, got {type_name(value)}")
        if "\0" in value:
            raise ck.fail(key, f"{value!r} contains a NUL character", "valid: text without NUL")
        if self.pattern is not None and not self.pattern.fullmatch(value):
            hint = self.hint or f"must match {self.pattern.pattern}"
            raise ck.fail(key, f"{value!r} is not valid", hint)
        return value


@dataclass(frozen=True)
class AbsPath(Kind):
    """An absolute path (a string starting with ``/``) without a backslash or a control
    character (:func:`plain_path`)."""

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        path = Text().parse(ck, key, value)
        if not path.startswith("/"):
            raise ck.fail(key, f"{path!r} is not an absolute path",
                          "valid: a path starting with /")
        return plain_path(ck, key, path)


def plain_path(ck: Checker, key: str, path: str) -> str:
    """``path`` unless it holds a backslash or a control character (a newline, a tab):
    ``/proc/mounts`` and the hosts' marker files escape them, so a run would fail much
    later."""
    if "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise ck.fail(key, f"{path!r} contains a backslash or a control character",
                      "valid: a path without backslashes, tabs or newlines")
    return path


@dataclass(frozen=True)
class Number(Kind):
    """A number in ``[lo, hi]`` (``(lo, hi]`` when ``lo_open``), returned as a float."""

    lo: float = float("-inf")
    hi: float = float("inf")
    lo_open: bool = False

    def parse(self, ck: Checker, key: str, value: Any) -> float:
        number = finite(ck, key, value)
        below = number <= self.lo if self.lo_open else number < self.lo
        if below or number > self.hi:
            raise ck.fail(key, f"{value!r} is out of range", self.valid())
        return number

    def valid(self) -> str:
        """``valid: > 0 and <= 64`` for this range."""
        lo = f"> {self.lo:g}" if self.lo_open else f">= {self.lo:g}"
        return f"valid: {lo}" + ("" if self.hi == float("inf") else f" and <= {self.hi:g}")


def finite(ck: Checker, key: str, value: Any) -> float:
    """``value`` as a finite float: NaN, infinities (``.nan``, ``.inf``) and numbers too large
    for a float are refused, as is anything that is not a number (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ck.fail(key, f"must be a number, got {type_name(value)}", _yaml_exponent(value))
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        shown = "a number too large" if isinstance(value, int) else repr(value)
        raise ck.fail(key, f"{shown} is not a finite number", "valid: a finite number")
    return number


def _yaml_exponent(value: Any) -> str | None:
    """The hint for a number in exponent form that YAML 1.1 read as text: it needs a dot
    and a signed exponent (``1e308`` and ``1.0e5`` are text, ``1.0e+308`` a number)."""
    if not isinstance(value, str) or not re.fullmatch(r"[-+]?[0-9.]+[eE][-+]?[0-9]+", value):
        return None
    mantissa, _, exponent = value.lower().partition("e")
    number = (mantissa if "." in mantissa else f"{mantissa}.0") + "e" + (
        exponent if exponent[0] in "+-" else f"+{exponent}")
    return f"YAML reads {value!r} as text; write {number}"


@dataclass(frozen=True)
class Integer(Kind):
    """An integer (not a bool) in ``[lo, hi]``; no ``hi`` means up to ``MAX_INTEGER``."""

    lo: int = 0
    hi: int | None = None

    def parse(self, ck: Checker, key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ck.fail(key, f"must be an integer, got {type_name(value)}")
        if value < self.lo or value > (MAX_INTEGER if self.hi is None else self.hi):
            hint = (f"valid: >= {self.lo}" if self.hi is None and value < self.lo
                    else f"valid: {self.lo}..{self.hi or MAX_INTEGER}")
            raise ck.fail(key, f"{value} is out of range", hint)
        return value


@dataclass(frozen=True)
class Boolean(Kind):
    """``true`` or ``false``."""

    def parse(self, ck: Checker, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ck.fail(key, f"must be true or false, got {type_name(value)}")
        return value


@dataclass(frozen=True)
class Choice(Kind):
    """One of ``choices``."""

    choices: tuple[str, ...]

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        if value not in self.choices:
            raise ck.fail(key, f"{value!r} is not valid", valid_hint(self.choices))
        return str(value)


@dataclass(frozen=True)
class Argv(Kind):
    """An argv template: a non-empty list of strings whose ``{names}`` are in ``placeholders``."""

    placeholders: tuple[str, ...]

    def parse(self, ck: Checker, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise ck.fail(key, "must be a non-empty list of strings (argv), got "
                          f"{type_name(value)}", 'e.g. [python3, "{app_dir}/run.py", "{dataset}"]')
        return tuple(self._item(ck, f"{key}[{i}]", item) for i, item in enumerate(value))

    def _item(self, ck: Checker, key: str, item: Any) -> str:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise ck.fail(key, f"must be a string, got {type_name(item)}")
        text = str(item)
        if "\0" in text:  # no argv of exec can carry one
            raise ck.fail(key, f"{text!r} contains a NUL character", "valid: text without NUL")
        try:
            names = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
        except ValueError as e:
            raise ck.fail(key, f"bad placeholder syntax in {text!r}: {e}",
                          "use {name}; write {{ and }} for literal braces") from None
        for name in names:
            if name not in self.placeholders:
                raise ck.fail(key, f"unknown placeholder {{{name}}}",
                              valid_hint(self.placeholders))
        return text


@dataclass(frozen=True)
class Nested(Kind):
    """A nested :func:`section` (``kinds`` swaps the kinds of some of its fields)."""

    cls: type
    kinds: Mapping[str, Kind] = field(default_factory=dict)

    def parse(self, ck: Checker, key: str, value: Any) -> Any:
        return ck.section(self.cls, value, key, self.kinds)


# ------------------------------------------------------------------------------- sections
def option(kind: Kind, *, default: Any = MISSING,
           default_factory: Callable[[], Any] | Any = MISSING) -> Any:
    """Declare a config key as a dataclass field: no default = required, ``None`` = optional."""
    return field(default=default, default_factory=default_factory, metadata={_KIND: kind})


@dataclass_transform(frozen_default=True, field_specifiers=(option, field))
def section(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen dataclass whose :func:`option` fields are its config keys."""
    return dataclass(frozen=True)(cls)


def _options(cls: type) -> tuple[Field[Any], ...]:
    return tuple(f for f in fields(cls) if _KIND in f.metadata)


def option_names(cls: type) -> tuple[str, ...]:
    """The keys a section accepts, in declaration order (the ``valid:`` hint of a typo)."""
    return tuple(f.name for f in _options(cls))


def to_dict(value: Any) -> Any:
    """A section as plain YAML/JSON data: its options by name, tuples as lists, recursively."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_dict(getattr(value, f.name)) for f in _options(type(value))}
    if isinstance(value, tuple | list):
        return [to_dict(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_dict(v) for k, v in value.items()}
    return value
