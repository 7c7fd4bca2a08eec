"""Acceptance 2 of issue 10: the README's two commands work where `python3 -m pip install`
is refused (PEP 668, stock Debian 12). A throwaway Python is made from a copy of this
interpreter with the EXTERNALLY-MANAGED marker in its stdlib directory; scripts/quickstart.sh
(through scripts/bootstrap.sh) must build its own virtual environment with it and finish, and
scripts/test.sh must then run from that environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = "[externally-managed]\nError=a throwaway system Python (tests/integration)\n"
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "out", "build", "*.egg-info", "*.db",
                                     "__pycache__", ".lab", ".pytest_cache", ".ruff_cache",
                                     ".mypy_cache")

pytestmark = pytest.mark.slow


def run(cmd: list[str], cwd: Path, env: dict[str, str],
        timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def externally_managed_python(root: Path) -> Path:
    """A system-like Python at ``root`` (not a venv: no pyvenv.cfg) with pip and the PEP 668
    marker: the stdlib is linked from this interpreter's."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    subprocess.run([sys.executable, "-m", "venv", "--copies", "--without-pip", str(root)],
                   check=True)
    (root / "pyvenv.cfg").unlink()
    lib = root / "lib" / stdlib.name
    for entry in stdlib.iterdir():
        skip = entry.name in ("site-packages", "EXTERNALLY-MANAGED")
        if not skip and not (lib / entry.name).exists():
            (lib / entry.name).symlink_to(entry)
    python = root / "bin" / "python3"
    subprocess.run([python, "-m", "ensurepip"], check=True, capture_output=True)
    (lib / "EXTERNALLY-MANAGED").write_text(MARKER)
    return python


@pytest.fixture
def pg_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="nimo-pg-bootstrap-"))  # the postgres user enters it
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_readme_commands_work_where_system_pip_is_refused(tmp_path: Path,
                                                          pg_dir: Path) -> None:
    python = externally_managed_python(tmp_path / "system-python")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NIMO_TEST_POSTGRES_URL")}
    env["PATH"] = ":".join(p for p in env["PATH"].split(":")
                           if not Path(p, "activate").exists())  # no venv on PATH
    refused = run([str(python), "-m", "pip", "install", "--no-index", "nimo-workbench"],
                  tmp_path, env)
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr

    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=COPY_IGNORE)
    venv = tmp_path / "venv"
    env.update(NIMO_PYTHON=str(python), NIMO_VENV=str(venv), NIMO_PG_DIR=str(pg_dir),
               NIMO_PG_PORT=str(56000 + os.getpid() % 1000))
    quick = run(["bash", "scripts/quickstart.sh"], repo, env)
    assert quick.returncode == 0, quick.stdout[-3000:] + quick.stderr[-3000:]
    assert "quickstart: campaign" in quick.stdout
    assert (repo / "out/model.json").is_file() and (repo / "out/convergence.png").is_file()
    assert (venv / "bin/nimo").exists() and not (python.parent / "nimo").exists()

    tests = run(["bash", "scripts/test.sh", "tests/unit/test_cli_main.py", "-k", "version"],
                repo, env)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-3000:]
    assert "no virtual environment" not in tests.stderr
    assert " passed" in tests.stdout and "error" not in tests.stdout.lower()
