"""Streaming replay CSV reader: the same dataset as reading everything, limits on levels and
assignments, repeats aggregated, ``--load`` and the calibration split (issue 9 items 5-6,
issue 10 item 8)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nimo.errors import ConfigError, DataError
from nimo.records import Sample, occupancies
from workbench import replay_columns, replay_data
from workbench.cli import main
from workbench.replay import ReplayOptions, ReplayRunner, external_test_set, load_dataset

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "datasets").glob("*/*.csv"))


# -- the reader before streaming, kept as the reference: read every row, then group ---------

def reference_load(path: Path, attributes: Sequence[str] | None = None,
                   where: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in reader.fieldnames or []]
        reader.fieldnames = header
        rows = [(reader.line_num, r) for r in reader]  # the line each row ends on
    reserved = {*replay_columns.RESERVED, *replay_columns.METADATA}

    def numeric(c: str) -> bool:
        try:
            for _, r in rows[:50]:
                float(r[c])
            return True
        except (TypeError, ValueError):
            return False

    names = list(attributes) if attributes else [
        h for h in header if h not in reserved and numeric(h)]
    has_occ = all(c in header for c in replay_columns.OCCUPANCY_COLUMNS)
    derive = not has_occ and "U" in header and "D" in header
    runs: dict[tuple[float, ...], list[Sample]] = {}
    for line, r in rows:
        if any((r.get(c) or "").strip() != v for c, v in where):
            continue
        point = tuple(float(r[c]) for c in names)
        a, T = dict(zip(names, point, strict=True)), float(r["T"])
        if has_occ:
            U = float(r["U"]) if r.get("U") not in (None, "") else None
            s = Sample(assignment=a, T=T, D=float(r["D"]), U=U, o_a=float(r["o_a"]),
                       o_n=float(r["o_n"]), o_d=float(r["o_d"]), cost_s=T, meta={"line": line})
        elif derive:
            U, D = float(r["U"]), float(r["D"])
            o = occupancies(T, U, D)
            s = Sample(assignment=a, T=T, D=D, U=U, o_a=o.o_a, o_n=o.o_n, o_d=o.o_d, cost_s=T,
                       meta={"line": line, "split": "none"})
        else:
            s = Sample(assignment=a, T=T, cost_s=T, meta={"line": line})
        runs.setdefault(point, []).append(s)
    return {"names": names, "kind": "occupancy" if has_occ or derive else "direct",
            "runs": runs}


def assert_same(ds: replay_data.ReplayDataset, ref: Mapping[str, Any]) -> None:
    assert list(ds.space.names) == ref["names"] and ds.kind == ref["kind"]
    assert list(ds.runs) == list(ref["runs"])            # same assignments, same order
    assert ds.space.candidates == tuple(ref["runs"])
    for a, samples in ref["runs"].items():
        assert ds.runs[a] == tuple(samples)
        assert ds.mean_T(a) == float(np.mean([s.T for s in samples]))  # exactly
    levels = {n: sorted({a[i] for a in ref["runs"]}) for i, n in enumerate(ref["names"])}
    assert {a.name: list(a.levels) for a in ds.space.attributes} == levels


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_streaming_reader_builds_the_same_dataset_on_the_shipped_csvs(path: Path) -> None:
    assert_same(load_dataset(path), reference_load(path))


def test_streaming_reader_same_on_derived_direct_and_filtered(tmp_path: Path) -> None:
    derived = tmp_path / "d.csv"
    derived.write_text("cpu,mem,T,U,D\n1,2,10,0.5,100\n1,2,12,0.4,100\n\n3,2,5,0.9,50\n")
    assert_same(load_dataset(derived), reference_load(derived))
    direct = tmp_path / "x.csv"
    direct.write_text("host,nodes,T\na,1,10\nb,1,11\na,2,6\nb,4,3\n")
    assert_same(load_dataset(direct, where=[("host", "a")]),
                reference_load(direct, where=[("host", "a")]))
    assert_same(load_dataset(direct, ["nodes"]), reference_load(direct, ["nodes"]))


def write_levels(path: Path, levels: int, repeats: int = 1) -> Path:
    with path.open("w") as fh:
        fh.write("size,cpu,T\n")
        for i in range(levels):
            for r in range(repeats):
                fh.write(f"{i + 1},{1 + i % 2},{10 + i + 0.1 * r}\n")
    return path


def test_a_column_with_too_many_levels_is_refused_unless_named(tmp_path: Path, capsys) -> None:
    path = write_levels(tmp_path / "wide.csv", 60)
    with pytest.raises(DataError, match=r"column 'size' has more than 50 distinct values") as e:
        load_dataset(path)
    assert "--attributes" in (e.value.hint or "") and "--max-levels" in (e.value.hint or "")
    assert len(load_dataset(path, ["size", "cpu"]).runs) == 60   # named: the user means it
    assert len(load_dataset(path, max_levels=60).runs) == 60
    assert main(["replay", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'size'" in err[0] and "50" in err[0]


def test_too_many_assignments_are_refused(tmp_path: Path, capsys) -> None:
    path = write_levels(tmp_path / "grid.csv", 30)
    with pytest.raises(DataError, match=r"more than 20 distinct assignments"):
        load_dataset(path, ["size", "cpu"], max_assignments=20)
    assert len(load_dataset(path, ["size", "cpu"], max_assignments=30).runs) == 30
    assert main(["replay", str(path), "--quiet", "--max-assignments", "20"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-assignments" in err[0] and "20" in err[0]
    with pytest.raises(ConfigError, match="--max-levels must be >= 1"):
        ReplayOptions(str(path), max_levels=0)


def test_repeats_beyond_the_cap_are_a_reservoir_with_the_exact_mean(tmp_path: Path) -> None:
    n = replay_data.MAX_REPEATS * 3 + 7
    path = tmp_path / "rep.csv"
    Ts = [1.0 + (i * 37 % 101) for i in range(n)]
    path.write_text("cpu,T\n" + "".join(f"1,{t}\n" for t in Ts) + "2,5\n")
    ds = load_dataset(path)
    kept = ds.runs[(1.0,)]
    assert len(kept) == replay_data.MAX_REPEATS
    assert ds.mean_T((1.0,)) == pytest.approx(sum(Ts) / n, rel=1e-12)
    lines = [s.meta["line"] for s in kept]
    assert len(set(lines)) == len(lines) and all(2 <= ln <= n + 1 for ln in lines)
    assert all(s.T == Ts[s.meta["line"] - 2] for s in kept)   # each kept row is the file's
    assert max(lines) > replay_data.MAX_REPEATS + 1           # later rows get their chance
    assert load_dataset(path).runs[(1.0,)] == kept            # deterministic


def test_load_columns_have_direction_minus_one_and_survive_resume(tmp_path: Path) -> None:
    path = tmp_path / "load.csv"
    path.write_text("cpu_mhz,input_mb,T\n" + "".join(
        f"{c},{m},{m / c}\n" for c in (1000, 2000, 3000) for m in (10, 20, 40)))
    plain = load_dataset(path)
    assert {a.name: a.direction for a in plain.space.attributes} == {"cpu_mhz": 1, "input_mb": 1}
    runner = ReplayRunner.open(ReplayOptions(str(path), load="input_mb", external_test=2))
    dirs = {a.name: a.direction for a in runner.space.attributes}
    assert dirs == {"cpu_mhz": 1, "input_mb": -1}
    assert runner.dataset.load == ("input_mb",)
    spec = json.loads(json.dumps(runner.spec()))
    assert spec["load"] == ["input_mb"]
    again = ReplayRunner.from_spec(spec)            # what `nimo campaign resume` rebuilds
    assert {a.name: a.direction for a in again.space.attributes} == dirs
    with pytest.raises(DataError, match="--load column 'mem' is not an attribute"):
        load_dataset(path, load=["mem"])


def test_calibration_split_is_disjoint_from_the_external_set_and_the_planner(tmp_path) -> None:
    data = ROOT / "datasets" / "synthetic" / "cpu_bound.csv"
    runner = ReplayRunner.open(ReplayOptions(str(data), external_test=10,
                                             calibration_split=12, seed=3))
    plain = ReplayRunner.open(ReplayOptions(str(data), external_test=10, seed=3))
    assert runner.external == plain.external            # the split never moves the judge
    assert plain.calibration == []
    cal = {tuple(sorted(a.items())) for a, _ in runner.calibration}
    ext = {tuple(sorted(a.items())) for a, _ in runner.external}
    space = {tuple(sorted(runner.space.as_dict(c).items())) for c in runner.space.candidates}
    assert len(cal) == 12 and not cal & ext and not cal & space and not ext & space
    assert len(space) == len(plain.space.candidates) - 12
    with pytest.raises(ConfigError, match="calibration assignments"):
        ReplayRunner.open(ReplayOptions(str(data), external_test=10, calibration_split=5000))


def _calibration(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    data = ROOT / "datasets" / "synthetic" / "io_bound.csv"
    out = tmp_path / f"run{len(extra)}.json"
    assert main(["replay", str(data), "--seed", "2", "--quiet", "--external-test", "15",
                 "--json", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    return doc["model"]["calibration"], doc["final"]


def test_the_external_test_set_never_calibrates_the_delivered_model(tmp_path: Path) -> None:
    own, final = _calibration(tmp_path)
    assert own["method"] == "loo-studentized"
    assert 0.0 <= final["external_coverage_90"] <= 1.0       # scored, not calibrated on
    split, final2 = _calibration(tmp_path, "--calibration-split", "9")
    assert split["method"] == "holdout-studentized" and len(split["z"]) == 9
    assert final2["external_coverage_90"] is not None


def test_external_test_set_is_the_same_for_the_streamed_dataset() -> None:
    data = ROOT / "datasets" / "synthetic" / "memory_cliff.csv"
    ds = load_dataset(data)
    ref = reference_load(data)["runs"]
    picks = external_test_set(ds, 20, 5)
    rng = np.random.default_rng([5, 7919])
    expected = [list(ref)[int(i)] for i in sorted(rng.choice(len(ref), size=20, replace=False))]
    assert picks == expected and all(math.isfinite(ds.mean_T(a)) for a in picks)


def test_default_external_count_is_30_or_a_fifth_of_the_assignments():
    from workbench.replay import default_external_count

    assert default_external_count(1500) == 30
    assert default_external_count(150) == 30
    assert default_external_count(149) == 29
    assert default_external_count(48) == 9
    assert default_external_count(4) == 0  # nothing withheld: no external figure
