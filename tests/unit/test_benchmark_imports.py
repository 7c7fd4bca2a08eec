"""Every benchmark module imports (the README tells users to run them; mypy checks only
nimo/ and workbench/, so a moved function once broke benchmarks/scale/bell.py unseen)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULES = sorted(p for p in (REPO / "benchmarks").rglob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_benchmark_module_imports(path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(REPO))
    monkeypatch.syspath_prepend(str(path.parent))  # as when run as a script
    name = ".".join(path.relative_to(REPO).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)  # scripts run only under __main__
