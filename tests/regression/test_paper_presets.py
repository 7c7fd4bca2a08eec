"""The paper's presets learn exactly as they did when the snapshot was recorded.

Every preset but ``recommended``, its ``-gp`` and ``-physical`` variants and the baselines
(which later work may change on purpose)
is replayed on every shipped dataset with seeds 1-3 through the real CLI; the runs, their
order and every figure must match the snapshot to 1e-9 (one for every BLAS kernel since
session 54; replay_snapshot.py says why). ``recommended``, the default every user gets, must
make the same runs in the same order with figures within ``GP_TOLERANCE``: a change of its
behaviour is made on purpose, measured, and recorded (``replay_snapshot.py record --presets
recommended``), never by accident.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "replay_snapshot", Path(__file__).with_name("replay_snapshot.py"))
assert _spec is not None and _spec.loader is not None
snapshot = importlib.util.module_from_spec(_spec)
sys.modules["replay_snapshot"] = snapshot  # worker processes unpickle its functions by name
_spec.loader.exec_module(snapshot)


def test_paper_presets_replay_exactly_as_recorded():
    keys = snapshot.keys_for(snapshot.paper_presets(), snapshot.SEEDS)
    assert len(keys) >= 10 * 6 * 3
    diffs = snapshot.check(keys)
    changed = {k: v for k, v in diffs.items() if v}
    assert not changed, "\n".join(f"{k}: {v}" for k, v in list(changed.items())[:5])


def test_recommended_makes_the_recorded_runs_with_figures_within_tolerance():
    keys = snapshot.keys_for(["recommended"], snapshot.SEEDS)
    diffs = snapshot.check(keys, tolerance=snapshot.GP_TOLERANCE)
    changed = {k: v for k, v in diffs.items() if v}
    assert not changed, "\n".join(f"{k}: {v}" for k, v in list(changed.items())[:5])


def test_snapshot_comparison_detects_a_moved_figure():
    expected = {"iterations": [{"run": 1, "T": 10.0}], "created_at": "a"}
    assert not list(snapshot.differences(expected, {**expected, "created_at": "b"}))
    moved = {"iterations": [{"run": 1, "T": 10.0 + 1e-6}], "created_at": "a"}
    assert list(snapshot.differences(expected, moved)) == ["/iterations[0]/T: 10.0 -> 10.000001"]
    assert list(snapshot.differences(expected, {"iterations": []}))
    assert not list(snapshot.differences(expected, moved, tolerance=1e-6))
    other_run = {"iterations": [{"run": 1, "T": 10.0, "assignment": {"cpu": 2}}]}
    assert list(snapshot.differences({"iterations": [{"run": 1, "T": 10.0, "assignment":
                                                      {"cpu": 1}}]}, other_run, tolerance=1e-4))


def test_a_missing_snapshot_is_named_with_the_ones_recorded(tmp_path):
    with pytest.raises(snapshot.NoSnapshot, match=r"no snapshot \S+ \(BLAS kernel .*record one"):
        snapshot.load_snapshot(tmp_path / "replay_snapshot.json.gz")


def test_a_kernel_takes_its_own_snapshot_only_where_one_was_recorded(monkeypatch, tmp_path):
    assert snapshot.snapshot_path("NoSuchCore") == snapshot.COMMON
    assert snapshot.COMMON.exists()
    monkeypatch.setattr(snapshot, "kernel_path", lambda kernel=None: tmp_path / "own.json.gz")
    (tmp_path / "own.json.gz").write_bytes(b"")
    assert snapshot.snapshot_path("Haswell") == tmp_path / "own.json.gz"
    assert snapshot.blas_kernel() != "unknown"


def test_a_case_missing_from_the_snapshot_is_reported_not_raised():
    key = snapshot.case_key("no-such-preset", snapshot.DATASETS[0], 1)
    assert snapshot.check([key]) == {key: ["not in the snapshot (record it)"]}
