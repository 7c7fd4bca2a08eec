"""The one YAML file reader: errors name the file (and, for malformed YAML, the line)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from nimo.errors import ConfigError, FileAccessError, NimoError


def read_yaml(path: Path, what: str = "file", *,
              malformed: Callable[[str], NimoError] = ConfigError,
              unreadable: Callable[[str], NimoError] = FileAccessError) -> Any:
    """The YAML document in ``path`` (``what`` names it in messages).

    Raises ``unreadable("FILE: cannot read WHAT: reason")`` when the file cannot be read and
    ``malformed("FILE:LINE: malformed YAML: problem")`` when it is not YAML.
    """
    try:
        text = path.read_text()
    except OSError as e:
        raise unreadable(f"{path}: cannot read {what}: {e.strerror or e}") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise malformed(f"{path}{line}: malformed YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise malformed(f"{path}: malformed YAML: {e}") from None
