"""Design files: ``designs/*.yaml`` presets or any YAML file, checked on load.

A design file either chooses every strategy of its ``strategy`` (``COMPLETE``: the presets
do) or starts from another design with ``extends: PRESET`` (a preset name or a design file,
relative to the extending file) and sets only what differs::

    extends: recommended
    stop: {max_runs: 6}

``stop`` and ``predictors`` are merged key by key with the base's; every other key replaces
the base's value. A partial design without ``extends:`` is an error that says which choices
are missing: the parser's defaults are the paper's, not the recommended design's, and taking
them silently would run a different design than the user meant.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nimo.errors import ConfigError
from workbench.shipped import shipped_dir
from workbench.yamlfile import read_yaml

if TYPE_CHECKING:  # the parser loads every strategy: imported where a design is parsed,
    from nimo.planner.design import DesignSpec  # so listing the presets stays cheap

RECOMMENDED = "recommended"
EXTENDS = "extends"
MERGED_KEYS = ("stop", "predictors")
# the choices a design without `extends:` must make, by strategy
COMPLETE: dict[str, tuple[str, ...]] = {
    "nimo": ("reference", "predictor_order", "traversal", "attribute_order", "sampling",
             "error", "stop", "predictors"),
    "random": ("stop", "predictors"),
    "all_samples": ("predictors",),
}
MAX_DEPTH = 8


def designs_dir() -> Path:
    """Where the presets are (the installed package's copy or the source tree's)."""
    return shipped_dir("designs")


def preset_names() -> list[str]:
    """The names of the shipped design presets (``designs/*.yaml``), sorted."""
    return sorted(p.stem for p in designs_dir().glob("*.yaml"))


def design_path(ref: str, relative_to: Path | None = None) -> Path:
    """The file of a design: an existing path (relative to ``relative_to``'s directory when
    given), else the preset of that name."""
    path = Path(ref)
    if relative_to is not None and not path.is_absolute():
        path = relative_to.parent / path
    if path.is_file():
        return path
    preset = designs_dir() / f"{ref}.yaml"
    if not preset.is_file():
        raise ConfigError(f"design {ref!r}: no such file or preset",
                          hint="presets: " + ", ".join(preset_names()))
    return preset


def load_design(ref: str | None = None) -> DesignSpec:
    """A design from a file path or a preset name; None means the recommended preset."""
    from nimo.planner.design import parse_design

    path = design_path(ref or RECOMMENDED)
    raw = design_mapping(path)
    spec = parse_design(raw, where=f"{path}: ")
    if spec.name == "custom" or not spec.name.strip():  # unnamed: called as its file
        spec = parse_design({**raw, "name": path.stem}, where=f"{path}: ")
    return spec


def design_mapping(path: Path, depth: int = 0) -> dict[str, Any]:
    """The design in ``path`` as one complete mapping, its ``extends:`` chain resolved."""
    from nimo.planner.design import parse_design

    raw = _read(path)
    base_ref = raw.pop(EXTENDS, None)
    if base_ref is None:
        parse_design(raw, where=f"{path}: ")  # unknown keys and values first: typos named
        check_complete(raw, path)
        return raw
    if not isinstance(base_ref, str) or not base_ref.strip():
        raise ConfigError(f"{path}: {EXTENDS}: expected a preset name or design file, got "
                          f"{base_ref!r}", hint="presets: " + ", ".join(preset_names()))
    if depth >= MAX_DEPTH:
        raise ConfigError(f"{path}: {EXTENDS}: chain longer than {MAX_DEPTH} designs "
                          "(a design extends itself?)")
    try:
        base_path = design_path(base_ref, relative_to=path)
    except ConfigError as e:  # name the file and the key that asked for it
        raise ConfigError(f"{path}: {EXTENDS}: {e.message}", hint=e.hint) from None
    base = design_mapping(base_path, depth + 1)
    merged = merge(base, raw)
    merged["name"] = raw.get("name", path.stem)
    merged["description"] = raw.get("description", f"{base.get('name', base_ref)} with "
                                    + ", ".join(k for k in raw if k not in ("name",)))
    return merged


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys: ``MERGED_KEYS`` mappings merged, others replaced."""
    out = dict(base)
    for key, value in override.items():
        old = out.get(key)
        if key in MERGED_KEYS and isinstance(old, Mapping) and isinstance(value, Mapping):
            out[key] = {**old, **value}
        else:
            out[key] = value
    return out


def check_complete(raw: Mapping[str, Any], path: Path) -> None:
    """Refuse a design that leaves some of its strategy's choices to the parser defaults."""
    strategy = raw.get("strategy")
    if strategy is None:
        missing: list[str] = ["strategy"]
    else:
        missing = [k for k in COMPLETE.get(str(strategy), ()) if k not in raw]
    if missing:
        raise ConfigError(
            f"{path}: a partial design (no {', '.join(missing)}) needs `extends: PRESET`",
            hint="start the file with `extends: recommended` and set only what differs; "
                 "presets: " + ", ".join(preset_names()))


def _read(path: Path) -> dict[str, Any]:
    raw = read_yaml(path, "design")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a design must be a YAML mapping of keys to values")
    return dict(raw)
