"""Replay input faults found by QA: a resumed campaign whose CSV changed, a negative seed,
``--where`` values compared as numbers (and on categorical columns), and ``--categorical``
naming a column that cannot be a categorical attribute."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nimo.errors import ConfigError, DataError
from nimo.store import MemoryStore, open_store
from workbench.campaigns import launch_replay
from workbench.cli import main
from workbench.designs import load_design
from workbench.fingerprint import check_unchanged
from workbench.replay import ReplayOptions, ReplayRunner, load_dataset

ROOT = Path(__file__).resolve().parents[2]
CLIFF = ROOT / "datasets" / "synthetic" / "memory_cliff.csv"
CPU = ROOT / "datasets" / "synthetic" / "cpu_bound.csv"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def triple_T(path: Path) -> None:
    """Rewrite ``path`` with every run time three times larger."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    t = header.index("T")
    rows = [line.split(",") for line in lines[1:] if line]
    for row in rows:
        row[t] = str(float(row[t]) * 3)
    path.write_text("\n".join([lines[0], *(",".join(r) for r in rows)]) + "\n")


# -- 1. a replay campaign's CSV changed before resume ------------------------------------
def test_resume_refuses_a_csv_changed_since_the_campaign_started(tmp_path, capsys) -> None:
    data = tmp_path / "cpu.csv"
    shutil.copy(CPU, data)
    url = f"sqlite:///{tmp_path}/r.db"
    runner = ReplayRunner.open(ReplayOptions(str(data), external_test=5, seed=2))
    launch_replay(runner, design=load_design("paper-default"), seed=2, store_url=url,
                  name="r", progress=False)
    with open_store(url) as store:
        info, before = store.campaign("r"), len(store.runs("r"))
    assert len(info.spec["dataset"]["sha256"]) == 64
    triple_T(data)
    assert main(["campaign", "resume", "r", "--store", url, "--quiet"]) == 2
    line = one_error_line(capsys)
    assert str(data) in line and "changed since campaign 'r' started" in line
    with open_store(url) as store:
        assert len(store.runs("r")) == before  # nothing added to the stored samples


def _replay_campaign(store: MemoryStore, data: Path, *, fingerprint: bool,
                     started: bool = True) -> None:
    spec = ReplayRunner.open(ReplayOptions(str(data), external_test=5)).spec()
    if not fingerprint:
        del spec["sha256"]
    store.create_campaign("c", "replay", design={},
                          spec={"dataset": spec, **({"external": []} if started else {})})


def test_a_replay_campaign_stored_without_a_fingerprint_resumes_unchecked(tmp_path) -> None:
    data = tmp_path / "cpu.csv"
    shutil.copy(CPU, data)
    store = MemoryStore()
    _replay_campaign(store, data, fingerprint=False)
    triple_T(data)
    check_unchanged(store, store.campaign("c"))  # older campaign: no refusal, as before
    assert "sha256" not in store.campaign("c").spec["dataset"]


def test_a_submitted_replay_campaign_records_its_fingerprint_at_first_start(tmp_path) -> None:
    data = tmp_path / "cpu.csv"
    shutil.copy(CPU, data)
    store = MemoryStore()
    _replay_campaign(store, data, fingerprint=False, started=False)
    check_unchanged(store, store.campaign("c"))
    assert len(store.campaign("c").spec["dataset"]["sha256"]) == 64
    check_unchanged(store, store.campaign("c"))  # unchanged: no error
    triple_T(data)
    with pytest.raises(DataError, match="changed since campaign 'c' started"):
        check_unchanged(store, store.campaign("c"))


# -- 2. a negative seed ----------------------------------------------------------------
def test_a_negative_seed_is_a_one_line_user_error(capsys) -> None:
    with pytest.raises(ConfigError, match="--seed must be >= 0"):
        ReplayOptions(str(CLIFF), seed=-1)
    assert main(["replay", str(CLIFF), "--seed", "-1", "--quiet"]) == 2
    assert "--seed must be >= 0" in one_error_line(capsys)


# -- 3. --where ------------------------------------------------------------------------
def test_where_matches_the_text_of_a_cell_and_a_miss_shows_how_values_are_written(
        capsys) -> None:
    """Text, not numbers: ``1.1`` and ``1.10`` are two builds, not one; ``451`` misses
    ``451.0``, and the error shows ``451.0``."""
    as_text = load_dataset(CLIFF, where=[("cpu_mhz", "451.0"), ("latency_ms", "0.0")])
    assert len(as_text.runs) > 0 and {a[0] for a in as_text.runs} == {451.0}
    assert main(["replay", str(CLIFF), "--quiet", "--where", "cpu_mhz=451"]) == 2
    line = one_error_line(capsys)
    assert "no data rows match the --where filters cpu_mhz=451 " in line and "451.0" in line


@pytest.mark.parametrize("extra", [[], ["--attributes", "cpu_mhz,mem_mb"]])
def test_where_without_a_match_says_so_naming_the_filter(capsys, extra) -> None:
    assert main(["replay", str(CLIFF), "--quiet", "--where", "cpu_mhz=12345", *extra]) == 2
    line = one_error_line(capsys)
    assert "no data rows match the --where filters cpu_mhz=12345" in line
    assert "451.0" in line and "no numeric attribute" not in line


def _kinds_csv(path: Path) -> Path:
    rows = ["cpu,mem,kind,T"]
    for cpu in (1, 2, 3, 4):
        for mem in (1, 2, 3):
            for kind, extra in (("a", 0), ("b", 5), ("c", 9)):
                rows.append(f"{cpu},{mem},{kind},{100 / cpu + 10 * mem + extra}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_where_on_a_categorical_column_matches_category_names(tmp_path) -> None:
    path = _kinds_csv(tmp_path / "kinds.csv")
    ds = load_dataset(path, where=[("kind", "b")], categorical=["kind"])
    assert len(ds.runs) == 12 and ds.categories == {"kind": ("b",)}


# -- 4. --categorical ------------------------------------------------------------------
def test_the_time_column_cannot_be_categorical(capsys) -> None:
    assert main(["replay", str(CLIFF), "--quiet", "--categorical", "T"]) == 2
    line = one_error_line(capsys)
    assert "'T' is the run-time column" in line and "more than 50" not in line


def test_categorical_must_be_among_the_named_attributes(capsys) -> None:
    assert main(["replay", str(CLIFF), "--quiet", "--attributes", "cpu_mhz,mem_mb",
                 "--categorical", "latency_ms"]) == 2
    line = one_error_line(capsys)
    assert "--categorical column 'latency_ms' is not among --attributes" in line
    assert "valid: cpu_mhz, mem_mb" in line


def test_run_times_near_the_float_limit_replay_without_a_traceback(tmp_path, capsys):
    """T around 1e300 s: the variance overflowed a Python float (OverflowError traceback),
    and the summary printed a learning time of 300 digits."""
    rows = ["a,b,T"] + [f"{a},{b},{1e300 * (1 + a / b):.6e}" for a in range(1, 7)
                        for b in range(1, 7)]
    data = tmp_path / "huge.csv"
    data.write_text("\n".join(rows) + "\n")
    assert main(["replay", str(data), "--seed", "1", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Error" not in err
    summary = out.strip().splitlines()[0]
    assert " h = " in summary and len(summary) < 400, summary
    from workbench.cli.progress import format_duration, format_hours

    assert format_hours(7.3 * 3600) == "7.30 h" and format_hours(3.6e303) == "1e+300 h"
    assert format_duration(7.3 * 3600) == "7.30h" and format_duration(3.6e303) == "1e+300h"


def test_sniffing_a_filtered_csv_holds_only_the_rows_the_filters_keep() -> None:
    """A filter that matches late in a large file: the rows read before the first match are
    not held (memory grows with distinct assignments, not rows)."""
    from workbench.csvfile import RowFilter
    from workbench.replay_data import SNIFF_ROWS, _sniff

    header = ["x", "kind", "T"]
    rows = [(i + 2, [str(i), "late" if i >= 100_000 else "early", "1.0"])
            for i in range(100_000 + 2 * SNIFF_ROWS)]
    first = _sniff(iter(rows), RowFilter(header, [("kind", "late")]))
    assert len(first) == SNIFF_ROWS and all(row[1] == "late" for _, row in first)
    assert first[0][0] == 100_002  # line numbers kept for the errors


def test_a_run_time_beyond_1e302_s_is_refused_naming_the_row(tmp_path, capsys):
    """Sums of times near the float limit overflow (an infinite learning time, numpy
    warnings, a 0% internal error): such a time is refused in one line."""
    rows = ["a,b,T"] + [f"{a},{b},{5e307 * (1 + a / b):.6e}" for a in range(1, 5)
                        for b in range(1, 5)]
    data = tmp_path / "beyond.csv"
    data.write_text("\n".join(rows) + "\n")
    assert main(["replay", str(data), "--seed", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("nimo replay: error: " + f"{data}:2: T must be > 0 and at most 1e+302 s "
                   "(got 1e+308)"), err


def _grid(path, header: str, row) -> object:
    """A CSV of ``header`` and ``row(a, b)`` over a in 1..4, b in 1..3 (line 6: a=2, b=2)."""
    path.write_text("\n".join([header] + [row(a, b) for a in range(1, 5)
                                          for b in range(1, 4)]) + "\n")
    return path


@pytest.mark.parametrize(("extra", "cells", "named"), [
    ("D", "big", "D"),                 # text D without o_*: was silently ignored
    ("D", "100", "D"),                 # a number too: D alone is never read
    ("o_a", "1", "o_a"),               # an occupancy without the others
    ("U,D,o_n", "0.5,100,1", "o_n"),   # derived from U and D: o_n would be ignored
])
def test_a_measured_column_the_reader_would_ignore_is_refused(tmp_path, capsys, extra, cells,
                                                              named) -> None:
    data = _grid(tmp_path / "d.csv", f"x,y,T,{extra}", lambda x, y: f"{x},{y},{10 * x + y},{cells}")
    assert main(["replay", str(data), "--seed", "1", "--quiet"]) == 2
    line = one_error_line(capsys)
    assert f"{data}:1: column {named} would be ignored" in line
    assert "D, o_a, o_n, o_d (U optional) or U, D" in line


@pytest.mark.parametrize(("extra", "cells", "time", "kind"), [
    ("D,o_a,o_n,o_d", "50,0.1,0.05,0.05", "D", "occupancy"),
    ("D,o_a,o_n,o_d", "50,0.1,0.05,0.05", "o_a", "occupancy"),
    ("U,D", "0.5,50", "U", "derived"),
])
def test_a_run_time_taken_from_a_measured_column_is_refused(tmp_path, capsys, extra, cells,
                                                            time, kind) -> None:
    """``--time-column D`` on occupancy data replayed D (megabytes) as the run time while
    the occupancies described T: a model of one quantity scored against another."""
    data = _grid(tmp_path / "d.csv", f"x,y,T,{extra}", lambda x, y: f"{x},{y},{10 * x + y},{cells}")
    assert main(["replay", str(data), "--time-column", time, "--seed", "1", "--quiet"]) == 2
    line = one_error_line(capsys)
    assert f"{data}:1: --time-column {time!r} is read as a measurement of the {kind} data" in line
    assert "e.g. --time-column T" in line


def test_a_run_time_column_named_d_is_read_where_nothing_else_reads_d(tmp_path) -> None:
    data = _grid(tmp_path / "d.csv", "x,y,D", lambda x, y: f"{x},{y},{10 * x + y}")
    assert main(["replay", str(data), "--time-column", "D", "--seed", "1", "--quiet"]) == 0


@pytest.mark.parametrize(("argv", "flag", "value", "what"), [
    (["replay", str(CPU), "--attributes", ""], "--attributes", "", "is empty"),
    (["replay", str(CPU), "--attributes", "cpu_mhz,,mem_mb"], "--attributes",
     "cpu_mhz,,mem_mb", "has an empty name"),
    (["replay", str(CPU), "--attributes", " , "], "--attributes", " , ", "has an empty name"),
    (["replay", str(CPU), "--load", ""], "--load", "", "is empty"),
    (["replay", str(CPU), "--categorical", "mem_mb,"], "--categorical", "mem_mb,",
     "has an empty name"),
    (["model", "fit", str(CPU), "--family", "product", "--attributes", "", "-o", "-"],
     "--attributes", "", "is empty"),
    (["model", "fit", str(CPU), "--family", "product", "--attributes", "cpu_mhz",
      "--load", "", "-o", "-"], "--load", "", "is empty"),
    (["campaign", "submit", "x", "--replay", str(CPU), "--hosts", "",
      "--store", "sqlite:///:memory:"], "--hosts", "", "is empty"),
])
def test_an_empty_comma_list_option_is_a_usage_error(capsys, argv, flag, value, what) -> None:
    """An empty list (or name) was read as the flag left out (every column) or dropped."""
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert f"error: {flag} {value!r} {what} (give comma-separated names" in line


@pytest.mark.parametrize(("argv", "message"), [
    (["replay", str(CPU), "--attributes", "cpu_mhz,mem_mb,cpu_mhz"],
     "--attributes 'cpu_mhz,mem_mb,cpu_mhz' names 'cpu_mhz' twice"),
    (["model", "fit", str(CPU), "--family", "knn", "--attributes", "cpu_mhz,mem_mb",
      "--categorical", "mem_mb, mem_mb", "-o", "-"],
     "--categorical 'mem_mb, mem_mb' names 'mem_mb' twice"),
    (["campaign", "submit", "x", "--replay", str(CPU), "--hosts", "h1,h1",
      "--store", "sqlite:///:memory:"], "--hosts 'h1,h1' names 'h1' twice"),
])
def test_a_name_given_twice_in_a_comma_list_is_a_usage_error(capsys, argv, message) -> None:
    assert main(argv) == 2
    assert f"error: {message} (give each name once" in one_error_line(capsys)


@pytest.mark.parametrize(("extra", "message"), [
    (["--attributes", "cpu_mhz,T"],
     "--attributes names the run-time column 'T' (--time-column)"),
    (["--attributes", "cpu_mhz,mem_mb", "--time-column", "mem_mb"],
     "--attributes names the run-time column 'mem_mb' (--time-column)"),
    (["--attributes", "cpu_mhz", "--categorical", "mem_mb"],
     "--categorical column 'mem_mb' is not among the --attributes (valid: cpu_mhz)"),
    (["--attributes", "cpu_mhz,mem_mb", "--load", "latency_ms"],
     "--load column 'latency_ms' is not among the numeric --attributes (valid: cpu_mhz, "
     "mem_mb)"),
    (["--attributes", "cpu_mhz,mem_mb", "--categorical", "mem_mb", "--load", "mem_mb"],
     "--load column 'mem_mb' is not among the numeric --attributes (valid: cpu_mhz)"),
])
def test_model_fit_refuses_columns_that_cannot_be_its_attributes(tmp_path, capsys, extra,
                                                                 message) -> None:
    """The run time taken as an attribute fitted T from T (training MAPE 0.00%); a load or
    categorical column not among the attributes was added or silently dropped."""
    out = tmp_path / "m.json"
    assert main(["model", "fit", str(CPU), "--family", "product", *extra, "-o", str(out)]) == 2
    assert f"error: {message}" in one_error_line(capsys)
    assert not out.exists()


def test_model_score_and_update_refuse_an_attribute_as_the_run_time(tmp_path, capsys) -> None:
    """``--time-column`` naming a model attribute scored the model against that attribute."""
    model = tmp_path / "m.json"
    assert main(["model", "fit", str(CPU), "--family", "product", "--attributes",
                 "cpu_mhz,mem_mb", "-o", str(model)]) == 0
    capsys.readouterr()
    for argv in (["model", "score", str(model), str(CPU), "--time-column", "mem_mb"],
                 ["model", "update", str(model), str(CPU), "--time-column", "mem_mb", "-o",
                  str(tmp_path / "u.json")]):
        assert main(argv) == 2
        assert "--time-column 'mem_mb' is an attribute of the model" in one_error_line(capsys)
    assert not (tmp_path / "u.json").exists()
    one = tmp_path / "one.csv"
    one.write_text("cpu_mhz,mem_mb,T\n1000,512,3\n")
    assert main(["model", "score", str(model), str(one)]) == 0
    assert ": 1 run, MAPE" in capsys.readouterr().out
    assert main(["model", "update", str(model), str(one), "-o", str(tmp_path / "u.json")]) == 0
    assert "with 1 more run (" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["1e300", "-1e300", "1e-200", "1e31"])
def test_an_attribute_value_beyond_1e30_is_refused_naming_the_row(tmp_path, capsys, value):
    """An attribute near the float limit (or as tiny) leaked numpy's overflow warnings from
    the planner's fits, and `nimo model fit` ended in a LinAlgError traceback."""
    data = _grid(tmp_path / "huge.csv", "a,b,T",
                 lambda a, b: f"{value},2,50" if (a, b) == (2, 2) else f"{a},{b},{10 * a + b}")
    assert main(["replay", str(data), "--seed", "1", "--quiet"]) == 2
    line = one_error_line(capsys)
    assert f"{data}:6: column 'a': {float(value):g} is out of range for an attribute" in line
    assert "valid: 0 or a magnitude from 1e-30 to 1e+30" in line
    assert main(["model", "fit", str(data), "--family", "product", "--attributes", "a,b",
                 "-o", str(tmp_path / "m.json")]) == 2
    assert f"{data}:6: column 'a': {float(value):g} is out of range" in one_error_line(capsys)
    assert not (tmp_path / "m.json").exists()


def test_attribute_values_up_to_1e30_replay_without_numpy_warnings(tmp_path, capsys):
    import warnings

    rows = ["a,b,T"] + [f"{a},{b},{10 * a + b}" for a in range(1, 6) for b in range(1, 5)]
    rows[5], rows[9] = "1e30,1e-30,50", "-1e30,1e30,40"
    data = tmp_path / "wide.csv"
    data.write_text("\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow
        warnings.simplefilter("error", UserWarning)  # nor statsmodels' rank-deficient note
        assert main(["replay", str(data), "--seed", "1", "--quiet", "--external-test", "2"]) == 0
