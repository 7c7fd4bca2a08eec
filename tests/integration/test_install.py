"""Acceptance 1 of issue 10: a wheel built from this tree, installed with its lab extra into a
fresh virtual environment (no source tree on the path), works from any directory: the shipped
designs, datasets and example inventory are in the wheel, and the README's commands run from a
scratch directory. The live part builds a lab and runs a 6-run campaign (`extends:
recommended`, `stop: {max_runs: 6}`) through `nimo doctor`, `campaign run`, `model export`,
`predict` and `plot`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("workbench/_shipped/designs/recommended.yaml",
           "workbench/_shipped/designs/paper-default.yaml",
           "workbench/_shipped/inventories/example.yaml",
           "workbench/_shipped/datasets/synthetic/memory_cliff.csv",
           "workbench/_shipped/datasets/lab/checksum.csv",
           "workbench/apps/checksum.py", "workbench/apps/gen_dataset.py")

pytestmark = pytest.mark.slow


def sh(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
       timeout: float = 900) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
        "-w", str(out), str(ROOT)], cwd=out)
    (path,) = out.glob("nimo_workbench-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the wheel and its lab extra; yields its bin directory."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    env = scratch_env(venv / "bin")  # a source tree on PYTHONPATH would pass as installed
    sh([sys.executable, "-m", "venv", str(venv)], cwd=venv.parent, env=env)
    sh([str(venv / "bin/python"), "-m", "pip", "install", "-q", f"{wheel}[lab]"],
       cwd=venv.parent, env=env)
    assert (venv / "bin/nimo").exists()
    yield venv / "bin"


def scratch_env(bindir: Path) -> dict[str, str]:
    """No PYTHONPATH, the venv first on PATH: only the installed package is importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def test_wheel_carries_the_shipped_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in SHIPPED if n not in names]
    assert not missing, missing
    presets = {n.rpartition("/")[2] for n in names if n.startswith("workbench/_shipped/designs/")}
    assert presets == {p.name for p in (ROOT / "designs").glob("*.yaml")}
    assert not any(n.startswith(("designs/", "datasets/", "tests/")) for n in names)


def test_installed_nimo_works_from_a_scratch_directory(installed: Path, tmp_path: Path) -> None:
    env = scratch_env(installed)
    nimo = str(installed / "nimo")
    version = sh([nimo, "--version"], tmp_path, env).stdout.strip()
    assert version.startswith("nimo ")
    probe = sh([str(installed / "python"), "-c", "import workbench; print(workbench.__file__)"],
               tmp_path, env).stdout
    assert str(ROOT) not in probe and "site-packages" in probe
    data = Path(sh([nimo, "datasets", "path", "memory_cliff"], tmp_path, env).stdout.strip())
    assert data.is_file() and "site-packages" in str(data)
    listing = sh([nimo, "datasets"], tmp_path, env).stdout
    assert "recommended" in listing and "example.yaml" in listing
    proc = sh([nimo, "replay", str(data), "--seed", "1", "--json", "run.json", "--quiet"],
              tmp_path, env)
    assert proc.stdout.startswith("design recommended: ")
    doc = json.loads((tmp_path / "run.json").read_text())
    assert doc["design"]["name"] == "recommended" and doc["final"]["runs"] > 0


@pytest.mark.lab
def test_installed_nimo_runs_a_live_campaign_on_its_lab(installed: Path, tmp_path: Path,
                                                        lab_slot: tuple[str, str]) -> None:
    env = scratch_env(installed)
    nimo = str(installed / "nimo")
    prefix, base = lab_slot
    lab = tmp_path / "lab"
    sh([nimo, "lab", "up", "--dir", str(lab), "--prefix", prefix, "--subnet-base", base],
       tmp_path, env)
    try:
        _live_campaign(nimo, lab / "inventory.yaml", tmp_path, env)
    finally:
        sh([nimo, "lab", "down", "--dir", str(lab)], tmp_path, env)


def _live_campaign(nimo: str, inventory: Path, cwd: Path, env: dict[str, str]) -> None:
    import yaml

    doc = yaml.safe_load(inventory.read_text())
    assert doc["knobs"] and doc["application"]["name"] == "checksum"
    sh([nimo, "doctor", str(inventory)], cwd, env)  # needs `nimo doctor` (issue 10, item 3)
    (cwd / "six.yaml").write_text("extends: recommended\nstop: {max_runs: 6}\n")
    store = f"sqlite:///{cwd}/nimo.db"
    sh([nimo, "campaign", "run", str(inventory), "--design", "six.yaml", "--store", store,
        "--name", "w1", "--quiet"], cwd, env)
    sh([nimo, "campaign", "samples", "w1", "--store", store, "-o", "w1.csv"], cwd, env)
    rows = (cwd / "w1.csv").read_text().strip().splitlines()
    assert len(rows) - 1 == 6  # exactly the budget (a header and 6 samples)
    sh([nimo, "model", "export", "w1", "--store", store, "-o", "model.json"], cwd, env)
    assignment = [f"{k['name']}={k['levels'][1]}" for k in doc["knobs"]]
    out = sh([nimo, "predict", "model.json", *assignment], cwd, env).stdout
    assert out.startswith("T = ")
    sh([nimo, "plot", "w1", "--store", store, "-o", "w1.png"], cwd, env)
    assert (cwd / "w1.png").stat().st_size > 10_000
