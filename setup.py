"""Build hook: the wheel carries the top-level shipped files (design presets, the example
inventory, the small datasets) as package data under ``workbench/_shipped/``, while the source
tree keeps them where the design card wants them (``designs/``, ``inventories/``,
``datasets/``). ``workbench.shipped`` finds them in either place. Everything else is in
pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# tests/integration/test_install.py builds a wheel and checks these are in it
WHEEL_FILES = ("designs/*.yaml", "inventories/example.yaml", "datasets/synthetic/*.csv",
               "datasets/lab/*.csv")


class BuildWithShippedFiles(build_py):
    """``build_py`` plus a copy of ``WHEEL_FILES`` into ``workbench/_shipped``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads them from the source tree
        target = Path(self.build_lib) / "workbench" / "_shipped"
        for pattern in WHEEL_FILES:
            files = sorted(ROOT.glob(pattern))
            if not files:
                raise SystemExit(f"setup.py: no file matches {pattern}")
            for src in files:
                dst = target / src.relative_to(ROOT)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)


setup(cmdclass={"build_py": BuildWithShippedFiles})
