"""Argv templates: the placeholders a command may use and filling them in for one run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nimo.config import valid_hint
from workbench.errors import InventoryError

# Placeholders every application command may use; knob names are added per inventory.
PLACEHOLDERS = ("dataset", "workdir", "threads", "app_dir", "size_mb", "run")


def render_argv(template: Sequence[str], values: Mapping[str, object]) -> list[str]:
    """Fill ``{placeholders}`` of an argv template; each element stays ONE argv item, so no
    value is ever parsed by a shell. Floats print without a trailing ``.0``."""
    shown = {k: (f"{v:g}" if isinstance(v, float) else str(v)) for k, v in values.items()}
    try:
        return [item.format_map(shown) for item in template]
    except KeyError as e:
        raise InventoryError(f"placeholder {{{e.args[0]}}} has no value",
                             hint=valid_hint(sorted(shown))) from None
