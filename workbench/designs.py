"""Design files: ``designs/*.yaml`` presets or any YAML file, checked on load."""

from __future__ import annotations

from pathlib import Path

from nimo.errors import ConfigError
from nimo.planner.design import DesignSpec, parse_design
from workbench.yamlfile import read_yaml

DESIGNS_DIR = Path(__file__).resolve().parents[1] / "designs"
RECOMMENDED = "recommended"


def preset_names() -> list[str]:
    """The names of the shipped design presets (``designs/*.yaml``), sorted."""
    return sorted(p.stem for p in DESIGNS_DIR.glob("*.yaml"))


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
    raw = read_yaml(path, "design")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a design must be a YAML mapping of keys to values")
    spec = parse_design(raw, where=f"{path}: ")
    if spec.name == "custom":
        spec = parse_design({**raw, "name": path.stem}, where=f"{path}: ")
    return spec
