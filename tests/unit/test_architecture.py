"""The layout's rules, checked from the source: layering, import cycles, sizes.

- ``nimo/`` (the pure learning core) never imports ``workbench/``, paramiko or subprocess.
- No import cycles among the modules of ``nimo/`` and ``workbench/`` (imports executed when a
  module loads; imports inside functions are deliberate lazy imports and are not counted).
- ``import nimo.store`` loads no planner or predictor module.
- No module over 400 lines, no function over 60 lines.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("nimo", "workbench")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def module_files() -> dict[str, Path]:
    files = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join(parts)] = path
    return files


def _load_time_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports run when the module loads: top level and inside top-level if/try blocks,
    except ``if TYPE_CHECKING:`` blocks."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                stack.extend(handler.body)


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(module: str, path: Path, known: set[str], lazy: bool) -> set[str]:
    """Modules ``module`` imports (with every package above them, which Python loads too)."""
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree) if lazy else _load_time_imports(tree)
    targets: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node, path.name == "__init__.py")
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    found = set()
    for target in targets:
        parts = target.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {t for t in found if t in known or t.split(".")[0] not in PACKAGES} - {module}


def import_graph() -> nx.DiGraph:
    files = module_files()
    graph = nx.DiGraph()
    for module, path in files.items():
        for target in imported_names(module, path, set(files), lazy=False):
            if target in files and not module.startswith(target + "."):
                graph.add_edge(module, target)
    return graph


def test_the_learning_core_never_imports_side_effects():
    files = module_files()
    offenders = []
    for module, path in files.items():
        if module.split(".")[0] != "nimo":
            continue
        for target in imported_names(module, path, set(files), lazy=True):
            if target.split(".")[0] in ("workbench", "paramiko", "subprocess"):
                offenders.append(f"{module} imports {target}")
    assert not offenders, offenders


def test_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, [" -> ".join([*c, c[0]]) for c in cycles[:10]]


def test_cycle_detection_sees_a_cycle(tmp_path):
    graph = nx.DiGraph([("a", "b"), ("b", "a")])
    assert list(nx.simple_cycles(graph))


def test_importing_the_store_loads_no_planner_or_predictor():
    code = ("import sys, nimo.store; print('\\n'.join(m for m in sys.modules "
            "if m.startswith(('nimo.planner', 'nimo.predictors'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.strip() == "", proc.stdout


def _long_functions(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name}() has {lines} lines"


def test_modules_and_functions_stay_small():
    too_big = []
    for path in module_files().values():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{path.relative_to(ROOT)} has {lines} lines")
        too_big.extend(_long_functions(path))
    assert not too_big, too_big


def test_test_module_names_are_unique() -> None:
    """pytest imports test modules by basename (no packages under tests/): two files of one
    name in different folders stop the whole run with an import mismatch."""
    tests = Path(__file__).resolve().parents[1]
    names = sorted(p.name for p in tests.rglob("*.py")
                   if p.parent != tests and p.name != "conftest.py")
    assert [n for i, n in enumerate(names) if n in names[:i]] == []
