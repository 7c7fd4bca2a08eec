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


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping names one key twice (``problem`` says which)."""


class _UniqueKeyLoader(yaml.SafeLoader):
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
    """The YAML document in ``text``; duplicate keys raise ``yaml.MarkedYAMLError``."""
    loader = _UniqueKeyLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


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


