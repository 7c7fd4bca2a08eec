"""Options declared once: a frozen dataclass whose fields carry their command-line flag, help
and default (``option``); ``add_flags`` turns them into argparse flags and ``from_args``
builds the dataclass from the parsed arguments. ``name_list`` reads a comma-separated flag
value (``--attributes a,b``), refusing an empty one."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from nimo.errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class Flag:
    """How one option field appears on the command line."""

    flag: str
    help: str | None = None
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None  # argparse ``type``
    repeat: bool = False  # ``action="append"``


def option(default: Any, flag: str, help: str | None = None, *, metavar: str | None = None,
           parse: Callable[[str], Any] | None = None, repeat: bool = False) -> Any:
    """A dataclass field with its default and its command-line flag."""
    return dataclasses.field(default=default, metadata={
        "flag": Flag(flag, help, metavar, parse, repeat)})


def flags(cls: type) -> list[tuple[dataclasses.Field[Any], Flag]]:
    """The fields of options class ``cls`` that have a flag, in declaration order."""
    return [(f, f.metadata["flag"]) for f in dataclasses.fields(cls) if "flag" in f.metadata]


def add_flags(parser: argparse.ArgumentParser | Any, cls: type, *, help_prefix: str = "",
              skip: Iterable[str] = ()) -> None:
    """Add a flag per option field of ``cls`` (but those in ``skip``) to ``parser``; each
    help text is prefixed with ``help_prefix``."""
    for f, spec in flags(cls):
        if f.name in set(skip):
            continue
        kwargs: dict[str, Any] = {"dest": f.name, "default": [] if spec.repeat else f.default}
        if spec.help is not None:
            kwargs["help"] = help_prefix + spec.help
        if spec.metavar is not None:
            kwargs["metavar"] = spec.metavar
        if spec.parse is not None:
            kwargs["type"] = spec.parse
        if spec.repeat:
            kwargs["action"] = "append"
        parser.add_argument(spec.flag, **kwargs)


def from_args(cls: Callable[..., T], args: argparse.Namespace, **given: Any) -> T:
    """The options of ``cls`` from parsed arguments; ``given`` supplies (or overrides)
    fields, such as positional arguments or flags added elsewhere."""
    values = {f.name: getattr(args, f.name) for f, _ in flags(cls)  # type: ignore[arg-type]
              if hasattr(args, f.name)}
    return cls(**{**values, **given})


def name_list(text: str, flag: str, absent: str | None = None) -> tuple[str, ...]:
    """The names of a comma-separated flag value (``a, b``). An empty value or an empty name
    (``''``, ``a,,b``) is a ConfigError naming the flag, never read as the flag left out
    (``absent``, for an optional flag, says what leaving it out means); so is a name given
    twice."""
    names = tuple(name.strip() for name in text.split(","))
    if "" in names:
        what = "is empty" if not text.strip() else "has an empty name"
        out = f", or leave {flag} out for {absent}" if absent else ""
        raise ConfigError(f"{flag} {text!r} {what}",
                          hint=f"give comma-separated names, e.g. {flag} a,b{out}")
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise ConfigError(f"{flag} {text!r} names {twice[0]!r} twice",
                          hint=f"give each name once, e.g. {flag} a,b")
    return names


def optional_names(value: str | Sequence[str] | None, flag: str, absent: str | None = None
                   ) -> tuple[str, ...] | None:
    """The names of an optional flag: from its comma-separated value (:func:`name_list`) or
    a list (a stored spec); None where the flag was left out."""
    if value is None:
        return None
    if isinstance(value, str):
        return name_list(value, flag, absent)
    return tuple(str(a) for a in value)
