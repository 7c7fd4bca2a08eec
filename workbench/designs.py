"""Design files: ``designs/*.yaml`` presets or any YAML file, checked on load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from nimo.errors import ConfigError, FileAccessError
from nimo.planner.design import DesignSpec, parse_design

DESIGNS_DIR = Path(__file__).resolve().parents[1] / "designs"
RECOMMENDED = "recommended"


def preset_names() -> list[str]:
    return sorted(p.stem for p in DESIGNS_DIR.glob("*.yaml"))


def read_yaml(path: Path) -> Any:
    """YAML from ``path``; malformed YAML names the file and line."""
    try:
        text = path.read_text()
    except OSError as e:
        raise FileAccessError(f"{path}: cannot read ({e.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{where}: malformed YAML ({problem})") from None


def load_design(ref: str | None = None) -> DesignSpec:
    """A design from a file path or a preset name; None means the recommended preset."""
    ref = ref or RECOMMENDED
    path = Path(ref)
    if not path.is_file():
        preset = DESIGNS_DIR / f"{ref}.yaml"
        if not preset.is_file():
            raise ConfigError(f"design {ref!r}: no such file or preset",
                              hint="presets: " + ", ".join(preset_names()))
        path = preset
    raw = read_yaml(path)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a design must be a YAML mapping of keys to values")
    spec = parse_design(raw, where=f"{path}: ")
    if spec.name == "custom":
        spec = parse_design({**raw, "name": path.stem}, where=f"{path}: ")
    return spec
