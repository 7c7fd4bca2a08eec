"""The paper's presets learn exactly as they did when the snapshot was recorded.

Every preset but ``recommended``, its ``-gp`` and ``-physical`` variants and the baselines
(which later work may change on purpose)
is replayed on every shipped dataset with seeds 1-3 through the real CLI; the runs, their
order and every figure must match the snapshot recorded on this machine's BLAS kernel to 1e-9
(replay_snapshot.py says why per kernel).
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


def test_snapshot_comparison_detects_a_moved_figure():
    expected = {"iterations": [{"run": 1, "T": 10.0}], "created_at": "a"}
    assert not list(snapshot.differences(expected, {**expected, "created_at": "b"}))
    moved = {"iterations": [{"run": 1, "T": 10.0 + 1e-6}], "created_at": "a"}
    assert list(snapshot.differences(expected, moved)) == ["/iterations[0]/T: 10.0 -> 10.000001"]
    assert list(snapshot.differences(expected, {"iterations": []}))


def test_a_kernel_without_a_snapshot_is_named_with_the_ones_recorded(tmp_path):
    with pytest.raises(snapshot.NoSnapshot, match=r"BLAS kernel \S+ .*record one"):
        snapshot.load_snapshot(tmp_path / "replay_snapshot.NoSuchCore.json.gz")
    assert snapshot.snapshot_path("Haswell").name == "replay_snapshot.Haswell.json.gz"
    assert snapshot.blas_kernel() != "unknown"


def test_a_case_missing_from_the_snapshot_is_reported_not_raised():
    key = snapshot.case_key("no-such-preset", snapshot.DATASETS[0], 1)
    assert snapshot.check([key]) == {key: ["not in the snapshot (record it)"]}
