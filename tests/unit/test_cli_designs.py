"""Design files: `extends:` a preset, partial designs refused, every preset complete;
shipped files found by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nimo.errors import ConfigError, FileAccessError
from workbench.designs import COMPLETE, design_mapping, designs_dir, load_design, preset_names
from workbench.shipped import dataset_names, dataset_path, example_inventory, resolve_data
from workbench.yamlfile import read_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_preset_is_complete_and_loads_as_itself() -> None:
    names = preset_names()
    assert "recommended" in names and len(names) >= 13
    for name in names:
        raw = read_yaml(designs_dir() / f"{name}.yaml")
        assert "extends" not in raw, name
        assert {"strategy", *COMPLETE[raw["strategy"]]} <= set(raw), name
        assert load_design(name).name == name


def test_extends_takes_the_base_and_merges_stop(tmp_path: Path) -> None:
    path = tmp_path / "six.yaml"
    path.write_text("extends: recommended\nstop: {max_runs: 6}\n")
    spec, base = load_design(str(path)), load_design("recommended")
    assert spec.name == "six"
    assert spec.stop.max_runs == 6 and spec.stop.error_pct == base.stop.error_pct
    assert spec.stop.patience == base.stop.patience
    assert (spec.reference, spec.sampling, spec.predictors) == (
        base.reference, base.sampling, base.predictors)
    assert "recommended" in spec.description


def test_extends_a_file_relative_to_the_design_and_chains(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("extends: paper-default\nreference: max\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\nstop: {min_samples: 3}\n")
    spec = load_design(str(tmp_path / "b.yaml"))
    assert spec.reference == "max" and spec.stop.min_samples == 3
    assert spec.stop.error_pct == load_design("paper-default").stop.error_pct
    assert spec.traversal == "round_robin"


def test_a_partial_design_without_extends_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "partial.yaml"
    path.write_text("stop: {max_runs: 6}\n")
    with pytest.raises(ConfigError) as e:
        load_design(str(path))
    text = str(e.value)
    assert str(path) in text and "partial design" in text and "strategy" in text
    assert "extends: recommended" in text
    path.write_text("strategy: nimo\nreference: max\n")
    with pytest.raises(ConfigError, match="no predictor_order, traversal"):
        load_design(str(path))


def test_extends_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("extends: loop.yaml\n")
    with pytest.raises(ConfigError, match="chain longer"):
        design_mapping(path)
    path.write_text("extends: no-such-preset\n")
    with pytest.raises(ConfigError, match="loop.yaml: extends: design 'no-such-preset': "
                                          "no such file or preset.*recommended"):
        load_design(str(path))
    path.write_text("extends: recommended\nsampling: zigzag\n")
    with pytest.raises(ConfigError, match=r"loop.yaml: sampling: unknown value 'zigzag'"):
        load_design(str(path))


def test_a_partial_design_is_a_one_line_cli_error(tmp_path: Path) -> None:
    path = tmp_path / "partial.yaml"
    path.write_text("stop: {max_runs: 6}\n")
    proc = subprocess.run([sys.executable, "-m", "workbench", "replay",
                           str(ROOT / "datasets/synthetic/cpu_bound.csv"), "--design",
                           str(path), "--quiet"], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "extends: recommended" in proc.stderr


def test_shipped_datasets_resolve_by_name_and_path() -> None:
    names = dataset_names()
    assert {"synthetic/memory_cliff", "lab/checksum"} <= set(names)
    assert dataset_path("memory_cliff") == dataset_path("synthetic/memory_cliff.csv")
    assert dataset_path("memory_cliff").is_file()
    assert resolve_data(str(ROOT / "datasets/lab/checksum.csv")) == \
        ROOT / "datasets/lab/checksum.csv"
    with pytest.raises(FileAccessError, match="no such shipped dataset.*synthetic/io_bound"):
        dataset_path("nope")
    inventory = read_yaml(example_inventory())
    assert inventory["knobs"] and inventory["application"]["name"]


def test_an_existing_path_is_a_path_not_a_dataset_name(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "memory_cliff").mkdir()  # a directory named like a shipped dataset
    assert resolve_data("memory_cliff") == Path("memory_cliff")


def test_nimo_datasets_prints_paths_that_exist() -> None:
    proc = subprocess.run([sys.executable, "-m", "workbench", "datasets", "path",
                           "memory_cliff"], capture_output=True, text=True, cwd="/",
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and Path(proc.stdout.strip()).is_file()


def test_recommended_physical_is_recommended_with_physical_ties() -> None:
    # presets stay complete files (no `extends:`), so this one repeats recommended's choices:
    # a change to recommended must be made here too, or this fails
    physical, base = load_design("recommended-physical"), load_design("recommended")
    assert physical.predictors == {**base.predictors, "physical_ties": True}
    assert base.predictors.get("physical_ties") is False
    mine = {k: v for k, v in vars(physical).items() if k not in ("name", "description",
                                                                   "predictors")}
    assert mine == {k: v for k, v in vars(base).items() if k in mine}
