"""Workload knobs (issue 12, item 1): dataset_mb and app_param in inventories, the per-level
dataset made once on the storage host, and its profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from workbench.apps import dataset_profile
from workbench.errors import InventoryError, WorkbenchError
from workbench.inventory import load_inventory
from workbench.testing import FakeConnection
from workbench.workload import WorkloadData, dataset_relpath, parse_profile

EXAMPLE = Path(__file__).resolve().parents[2] / "inventories" / "example.yaml"


def inventory(tmp_path: Path, knobs: list[dict], **top) -> object:
    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["knobs"] = knobs
    doc.update(top)
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_inventory(p)


KNOBS = [{"kind": "cpu_share", "levels": [0.5, 1.0]},
         {"kind": "dataset_mb", "levels": [2, 4, 8, 32]},
         {"name": "nthreads", "kind": "app_param", "direction": "capacity", "levels": [1, 2]},
         {"name": "passes", "kind": "app_param", "direction": "load", "levels": [1, 4]}]


def test_workload_knobs_become_load_attributes(tmp_path):
    inv = inventory(tmp_path, KNOBS)
    attrs = {a.name: a for a in inv.space().attributes}
    assert attrs["dataset_mb"].load and attrs["dataset_mb"].direction == -1
    assert attrs["passes"].load and attrs["passes"].direction == -1
    assert not attrs["nthreads"].load and attrs["nthreads"].direction == 1
    assert not attrs["cpu_share"].load
    assert attrs["dataset_mb"].levels == (2, 4, 8, 32)


@pytest.mark.parametrize("knob, says", [
    ({"name": "p", "kind": "app_param", "levels": [1, 2]}, "knobs[1].direction: is required"),
    ({"kind": "dataset_mb", "levels": [2], "direction": "load"}, "knobs[1].direction"),
    ({"name": "p", "kind": "app_param", "direction": "up", "levels": [1]}, "load, capacity"),
    ({"kind": "dataset_mb", "levels": [0, 2]}, "knobs[1].levels[0]"),
])
def test_bad_workload_knobs_are_one_line_errors(tmp_path, knob, says):
    with pytest.raises(InventoryError) as e:
        inventory(tmp_path, [KNOBS[0], knob])
    assert says in str(e.value) and "\n" not in str(e.value)


def test_dataset_mb_needs_the_ssh_executor(tmp_path):
    with pytest.raises(InventoryError, match="dataset_mb needs executor: ssh"):
        inventory(tmp_path, KNOBS[:2], executor="slurm")


def test_dataset_profile_of_a_directory(tmp_path):
    for name, size in (("a", 100), ("b", 300), (".nimo-dataset.json", 5)):
        (tmp_path / name).write_bytes(b"x" * size)
    assert dataset_profile.profile(str(tmp_path)) == {
        "bytes": 400, "elements": 2, "avg_element_bytes": 200.0, "max_element_bytes": 300}
    doc = json.dumps(dataset_profile.profile(str(tmp_path)))
    assert parse_profile(doc, "s")["dataset_max_element_bytes"] == 300.0
    with pytest.raises(WorkbenchError, match="s: unreadable dataset profile"):
        parse_profile("oops", "s")


def test_each_level_is_generated_and_profiled_once(tmp_path):
    inv = inventory(tmp_path, KNOBS)
    conn = FakeConnection("storage1").on(r"dataset_profile\.py", json.dumps(
        {"bytes": 2 * 2**20, "elements": 12, "avg_element_bytes": 1.0,
         "max_element_bytes": 2.0}))
    data = WorkloadData(inv, {"storage1": "/opt/app"})
    values = {"app_dir": "/opt/app", "threads": 1, "workdir": "/tmp", "run": 0, "size_mb": 48,
              "dataset": ""}
    kinds = {"cpu_share": 1.0, "dataset_mb": 2.0}
    first = data.prepare("storage1", conn, kinds, values)
    assert data.prepare("storage1", conn, kinds, values) == first
    assert first["dataset_bytes"] == 2 * 2**20 and first["dataset_elements"] == 12
    gens = conn.ran(r"gen_dataset\.py")
    assert len(gens) == 1 and len(conn.ran(r"dataset_profile\.py")) == 1
    assert "/srv/nimo/checksum-2mb" in gens[0]
    assert gens[0][gens[0].index("--size-mb") + 1] == "2"
    data.prepare("storage1", conn, {**kinds, "dataset_mb": 32.0}, values)
    assert len(conn.ran(r"gen_dataset\.py")) == 2
    assert dataset_relpath(inv, kinds) == "checksum-2mb"
    assert data.prepare("storage1", conn, {"cpu_share": 1.0}, values) == {}


def test_missing_level_without_a_generator_names_the_path(tmp_path):
    doc = yaml.safe_load(EXAMPLE.read_text())
    del doc["application"]["dataset"]["generate"]
    inv = inventory(tmp_path, KNOBS, application=doc["application"])
    conn = FakeConnection("storage1").on(["test", "-d", "/srv/nimo/checksum-4mb"],
                                         exit_code=1)
    with pytest.raises(WorkbenchError, match="checksum-4mb for dataset_mb=4 is missing"):
        WorkloadData(inv, {"storage1": "/opt/app"}).prepare("storage1", conn,
                                                            {"dataset_mb": 4.0}, {})


def test_file_count_knob_makes_one_dataset_per_combination(tmp_path):
    doc = yaml.safe_load(EXAMPLE.read_text())
    gen = doc["application"]["dataset"]["generate"]
    gen[gen.index("--files") + 1] = "{files}"
    knobs = [KNOBS[1], {"name": "files", "kind": "dataset_files", "levels": [1, 8]}]
    inv = inventory(tmp_path, knobs, application=doc["application"])
    attrs = {a.name: a for a in inv.space().attributes}
    assert attrs["files"].load and attrs["files"].direction == -1
    conn = FakeConnection("storage1").on(r"dataset_profile\.py", json.dumps(
        {"bytes": 1, "elements": 8, "avg_element_bytes": 1, "max_element_bytes": 1}))
    data = WorkloadData(inv, {"storage1": "/opt/app"})
    values = {"app_dir": "/opt/app", "threads": 1, "workdir": "/tmp", "run": 0, "size_mb": 48}
    for files in (1.0, 8.0, 8.0):
        data.prepare("storage1", conn, {"dataset_mb": 4.0, "dataset_files": files}, values)
    gens = conn.ran(r"gen_dataset\.py")
    assert [g[2] for g in gens] == ["/srv/nimo/checksum-4mb-1f", "/srv/nimo/checksum-4mb-8f"]
    assert [g[g.index("--files") + 1] for g in gens] == ["1", "8"]
    assert dataset_relpath(inv, {"dataset_files": 8.0}) == "checksum-8f"


def test_file_count_knob_needs_its_placeholder_in_the_generator(tmp_path):
    knobs = [KNOBS[1], {"name": "files", "kind": "dataset_files", "levels": [1, 8]}]
    with pytest.raises(InventoryError, match=r"generate: does not use \{files\}"):
        inventory(tmp_path, knobs)
    with pytest.raises(InventoryError, match="whole numbers"):
        inventory(tmp_path, [{"name": "f", "kind": "dataset_files", "levels": [1.5]}])
