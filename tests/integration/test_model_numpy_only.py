"""An exported model loads and predicts in a fresh virtualenv that has only numpy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from workbench.replay import open_replay

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_exported_model_predicts_identically_with_numpy_alone(tmp_path):
    from nimo.campaign import Campaign
    from nimo.planner import make_planner
    from workbench.designs import load_design

    runner, external = open_replay(str(ROOT / "datasets/synthetic/saturating.csv"), seed=2)
    planner = make_planner(runner.space, load_design("recommended"), 2, runner.kind)
    model = Campaign(planner, runner, external=external).run().model
    path = model.save(tmp_path / "model.json")
    points = [a for a, _ in external[:5]]
    expected = [model.predict(a) for a in points]

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "numpy"],
                   check=True, timeout=600)
    # Only the nimo package's files, not the project's dependencies.
    shutil.copytree(ROOT / "nimo", tmp_path / "src" / "nimo",
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = (
        "import json, sys\n"
        "from nimo.model import load_model\n"
        "m = load_model(sys.argv[1])\n"
        "pts = json.loads(sys.argv[2])\n"
        "print(json.dumps([m.predict(p) for p in pts]))\n"
        "heavy = [n for n in ('statsmodels', 'scipy', 'pandas', 'sqlmodel') if n in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([py, "-c", script, str(path), json.dumps(points)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(tmp_path / "src")}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for g, e in zip(got, expected, strict=True):
        assert g == pytest.approx(e, rel=1e-9)
    no_statsmodels = subprocess.run([py, "-c", "import statsmodels"], capture_output=True)
    assert no_statsmodels.returncode != 0
    assert sys.executable != str(py)
