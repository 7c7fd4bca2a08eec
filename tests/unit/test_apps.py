"""The shipped applications and their generator, run locally on small datasets."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.apps import APP_DIR, APPS, app, script_files
from workbench.errors import InventoryError
from workbench.inventory import parse_inventory, render_argv


def run(script: str, *args: str) -> dict:
    r = subprocess.run([sys.executable, str(APP_DIR / script), *args], capture_output=True,
                       text=True, timeout=120, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def gen(tmp_path: Path, kind: str, size_mb: float, files: int = 3) -> Path:
    d = tmp_path / kind
    subprocess.run([sys.executable, str(APP_DIR / "gen_dataset.py"), str(d), "--size-mb",
                    str(size_mb), "--files", str(files), "--kind", kind], check=True,
                   capture_output=True)
    return d


def test_generator_is_deterministic_sized_and_idempotent(tmp_path):
    d = gen(tmp_path, "records", 1.5)
    parts = sorted(d.glob("part-*"))
    assert len(parts) == 3
    assert sum(p.stat().st_size for p in parts) == pytest.approx(1.5 * 2**20, rel=0.01)
    digest = hashlib.sha256(parts[0].read_bytes()).hexdigest()
    out = subprocess.run([sys.executable, str(APP_DIR / "gen_dataset.py"), str(d),
                          "--size-mb", "1.5", "--files", "3", "--kind", "records"],
                         capture_output=True, text=True, check=True).stdout
    assert "already present" in out
    again = gen(tmp_path / "again", "records", 1.5)
    assert hashlib.sha256((again / "part-0000").read_bytes()).hexdigest() == digest
    line = parts[0].read_bytes().split(b"\n")[0]
    assert len(line) == 99 and line[10:11] == b" "


def test_checksum_matches_hashlib(tmp_path):
    d = gen(tmp_path, "random", 1)
    out = run("checksum.py", str(d), "--threads", "2")
    assert out["bytes_in"] == sum(p.stat().st_size for p in d.glob("part-*"))
    want = hashlib.sha256((d / "part-0001").read_bytes()).hexdigest()
    assert out["digests"]["part-0001"] == want


def test_compress_text_shrinks_and_random_does_not(tmp_path):
    text = run("compress.py", str(gen(tmp_path, "text", 0.5)), "--level", "1")
    rand = run("compress.py", str(gen(tmp_path, "random", 0.5)), "--codec", "zlib")
    assert text["bytes_out"] < text["bytes_in"] / 2
    assert rand["bytes_out"] > rand["bytes_in"] * 0.99


def test_sort_output_is_sorted_with_and_without_spilling(tmp_path):
    d = gen(tmp_path, "records", 2)
    for mem, spills in (("512", False), ("2", True)):
        w = tmp_path / f"w{mem}"
        out = run("sort.py", str(d), "--workdir", str(w), "--memory-mb", mem)
        assert (out["spilled"] > 0) is spills
        lines = (w / "sorted.out").read_bytes().splitlines()
        assert len(lines) == out["records"] and lines == sorted(lines)
        assert not list(w.glob("*.tmp"))  # spilled runs are removed
    small = run("sort.py", str(d), "--workdir", str(tmp_path / "w1"), "--memory-mb", "1")
    assert small["merge_passes"] >= 2  # less memory -> a smaller fan-in -> more passes


def test_scan_makes_the_requested_passes(tmp_path):
    d = gen(tmp_path, "random", 1)
    out = run("scan.py", str(d), "--passes", "3")
    assert len(out["pass_seconds"]) == 3 and out["bytes_per_pass"] == pytest.approx(2**20, 1e-2)


def test_apps_report_a_missing_dataset(tmp_path):
    (tmp_path / "empty").mkdir()
    r = subprocess.run([sys.executable, str(APP_DIR / "checksum.py"), str(tmp_path / "empty")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no files" in r.stderr


def test_registry_blocks_validate_as_inventory_applications():
    hosts = [{"name": "c", "address": "10.0.0.1", "role": "compute", "data_iface": "d0",
              "data_address": "10.1.0.1"},
             {"name": "s", "address": "10.0.0.2", "role": "storage", "data_iface": "d0",
              "data_address": "10.1.0.2"}]
    knobs = [{"kind": "memory_mb", "levels": [64, 256]}]
    for spec in APPS.values():
        inv = parse_inventory({"hosts": hosts, "knobs": knobs,
                               "application": spec.application()}, "apps.yaml")
        argv = render_argv(inv.application.command, {
            "dataset": "/m/x", "workdir": "/w", "threads": 1, "app_dir": "/a", "size_mb": 1,
            "run": 1, "memory_mb": 64.0})
        assert argv[1] == f"/a/{spec.script}" and argv[2] == "/m/x"
    assert {p.name for p in script_files()} >= {"gen_dataset.py", "sort.py", "scan.py"}
    with pytest.raises(InventoryError, match="unknown app 'nope'"):
        app("nope")


def test_compress_threads_give_the_same_output(tmp_path):
    data = str(gen(tmp_path, "text", 0.5))
    one = run("compress.py", data, "--level", "1")
    three = run("compress.py", data, "--level", "1", "--threads", "3")
    assert one["files"] > 1 and (one["bytes_in"], one["bytes_out"]) == (
        three["bytes_in"], three["bytes_out"])
