"""Name lookup shared by every strategy registry: one message for an unknown name.

A registry is a plain dict from the name used in ``designs/*.yaml`` to a class, written out
in the strategy's module (no import-time discovery).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from nimo.errors import ConfigError

T = TypeVar("T")


def check_name(key: str, value: object, valid: Iterable[str]) -> str:
    """``value`` if it is one of ``valid``; else ConfigError naming ``key`` and the valid names."""
    names = list(valid)
    if not isinstance(value, str) or value not in names:
        raise ConfigError(f"{key}: unknown value {value!r}", hint="valid: " + ", ".join(names))
    return value


def lookup(registry: Mapping[str, T], key: str, name: object) -> T:
    """The entry of ``registry`` called ``name`` (design key ``key``), checked as above."""
    return registry[check_name(key, name, registry)]
