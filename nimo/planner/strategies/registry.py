"""Name lookup shared by every strategy registry: one message for an unknown name.

A registry is a plain dict from the name used in ``designs/*.yaml`` to a class, written out
in the strategy's module (no import-time discovery).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

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


def named_or_spelled_out(registry: Mapping[str, Callable[[], T]], key: str, value: Any,
                         spelled_out: Callable[[Any], T]) -> T:
    """The registered strategy for a name, else ``spelled_out(value)`` (an order the design
    lists itself)."""
    if isinstance(value, str):
        return lookup(registry, key, value)()
    return spelled_out(value)
