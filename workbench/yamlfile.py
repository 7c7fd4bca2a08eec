"""The one YAML file reader: errors name the file (and, for malformed YAML, the line).

Stricter than ``yaml.safe_load``: a key given twice in one mapping is refused (YAML says keys
are unique; PyYAML silently keeps the last), and a file that is not UTF-8 text is one line,
not a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode

from nimo.errors import ConfigError, FileAccessError, NimoError

MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_DEPTH = 64
MAX_NODES = 100_000


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping names one key twice (``problem`` says which)."""


# libyaml's parser when PyYAML was built with it (8x faster), else the pure-Python one
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """``SafeLoader`` that refuses a key repeated in one mapping."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == MERGE_TAG:  # `<<: *base` then a key overrides on purpose
                    continue
                key = self.construct_object(key_node, deep=True)
                if _hashable(key) and key in seen:
                    raise DuplicateKeyError(None, None, f"duplicate key {key!r}",
                                            key_node.start_mark)
                if _hashable(key):
                    seen.add(key)
        return super().construct_mapping(node, deep)


def _hashable(key: Any) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def parse_yaml(text: str) -> Any:
    """The YAML document in ``text``; duplicate keys raise ``yaml.MarkedYAMLError``, and a
    document nested deeper than ``MAX_DEPTH``, recursive, or larger than ``MAX_NODES`` once
    its aliases are expanded raises ``yaml.YAMLError`` (a config is none of these)."""
    loader = _UniqueKeyLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    _expanded_size(data, {}, ())
    return data


def _expanded_size(value: Any, sizes: dict[int, int], path: tuple[int, ...]) -> int:
    """Nodes in ``value`` with aliases expanded (each shared node counted once per use,
    computed once)."""
    if not isinstance(value, dict | list):
        return 1
    key = id(value)
    if key in path:
        raise yaml.YAMLError("an alias refers to a node that contains it (recursive)")
    if key not in sizes:
        if len(path) >= MAX_DEPTH:
            raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels")
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        sizes[key] = 1 + sum(_expanded_size(v, sizes, (*path, key)) for v in items)
        if sizes[key] > MAX_NODES:
            raise yaml.YAMLError(f"more than {MAX_NODES} values once aliases are expanded")
    return sizes[key]


def read_yaml(path: Path, what: str = "file", *,
              malformed: Callable[[str], NimoError] = ConfigError,
              unreadable: Callable[[str], NimoError] = FileAccessError) -> Any:
    """The YAML document in ``path`` (``what`` names it in messages).

    Raises ``unreadable("FILE: cannot read WHAT: reason")`` when the file cannot be read and
    ``malformed("FILE:LINE: malformed YAML: problem")`` when it is not YAML, is not UTF-8
    text or repeats a key in one mapping.
    """
    try:
        data = path.read_bytes()
    except OSError as e:
        raise unreadable(f"{path}: cannot read {what}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise malformed(f"{path}:{line}: {what} is not UTF-8 text (byte "
                        f"0x{data[e.start]:02x} at offset {e.start})") from None
    try:
        return parse_yaml(text)
    except DuplicateKeyError as e:
        raise malformed(f"{path}{_line(e)}: {what}: {_problem(e)} (each key once)") from None
    except yaml.MarkedYAMLError as e:
        raise malformed(f"{path}{_line(e)}: malformed YAML: {_problem(e)}") from None
    except (yaml.YAMLError, ConstructorError, ValueError, RecursionError) as e:
        raise malformed(f"{path}: malformed YAML: {_flat(str(e))}") from None


def _line(e: yaml.MarkedYAMLError) -> str:
    mark = e.problem_mark or e.context_mark
    return f":{mark.line + 1}" if mark is not None else ""


def _problem(e: yaml.MarkedYAMLError) -> str:
    return _flat(str(e.problem or e.context))


def _flat(text: str) -> str:
    """One line: PyYAML's problems may span lines."""
    return " ".join(text.split())


