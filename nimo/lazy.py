"""Package names loaded on first use (PEP 562), so importing a package stays cheap
(``nimo.campaign``, ``nimo.store``; ``nimo/__init__.py`` keeps its own, since a numpy-only
venv needs only the files docs/model-format.md names)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, module_of: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``module_of`` is imported from
    its module when first asked for, then kept in the package; any other name is an
    AttributeError."""
    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
