"""Options declared once: a frozen dataclass whose fields carry their command-line flag, help
and default (``option``); ``add_flags`` turns them into argparse flags and ``from_args``
builds the dataclass from the parsed arguments."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

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
