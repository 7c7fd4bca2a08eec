"""Issue 11's input defects, each through the CLI entry point where a user meets it: one line
on stderr and exit 2, never a traceback; passwords never shown; read-only commands create no
store; stores and keys owner-only.

12: store passwords in --help and errors; 14: CSV, YAML and URL input; 15: read-only commands
and in-memory stores; 16: file permissions.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from nimo.errors import ConfigError, DataError, StoreError
from nimo.store import open_store
from nimo.store.urls import mask_url
from workbench.cli import main
from workbench.designs import load_design
from workbench.replay import load_dataset

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "inventories" / "example.yaml"
SECRET = "s3cr3t-Pw"


def one_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    """The single stderr line of a command that exited 2 (fails otherwise)."""
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert code == 2, out
    assert len(lines) == 1, out.err
    assert "Traceback" not in out.err
    return lines[0]


def grid_csv(path: Path, text_fn=lambda t: t, rows: int = 12) -> Path:
    body = "cpu,mem,T\n" + "".join(f"{1 + i % 3},{4 + i % 4},{10 + i}\n" for i in range(rows))
    path.write_bytes(text_fn(body).encode())
    return path


# -- 12: passwords ------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["plot", "--help"], ["model", "export", "--help"],
                                  ["campaign", "list", "--help"], ["campaign", "run", "--help"],
                                  ["serve", "--help"], ["replay", "--help"], ["--help"]])
def test_help_never_shows_the_store_password(argv, monkeypatch, capsys) -> None:
    monkeypatch.setenv("NIMO_STORE_URL", f"postgresql://nimo:{SECRET}@db.example/nimo")
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    assert "usage" in out and SECRET not in out and "s3cr3t" not in out


@pytest.mark.parametrize("url,hidden", [
    ("postgresql://u:p@ss-word@127.0.0.1:5x/db", "ss-word"),      # unescaped @ and bad port
    ("postgresql://u:pa@ss-word@127.0.0.1/db", "ss-word"),        # unescaped @
    (f"postgresql://u:{SECRET}@127.0.0.1:notaport/db", SECRET),    # non-numeric port
    (f"postgres://u:{SECRET}@127.0.0.1:1/db?password={SECRET}", SECRET),
    (f"u:{SECRET}@127.0.0.1/db", SECRET),                         # no scheme
])
def test_bad_store_urls_are_one_line_and_never_show_the_password(url, hidden, capsys) -> None:
    line = one_error(capsys, main(["campaign", "list", "--store", url]))
    assert hidden not in line and "***" in line
    assert hidden not in mask_url(url)


def test_bad_port_and_unescaped_at_say_what_is_wrong(capsys) -> None:
    line = one_error(capsys, main(["plot", "x", "--store", "postgresql://u:pw@h:5x/db"]))
    assert "port '5x' is not a number" in line and "pw" not in line
    line = one_error(capsys, main(["plot", "x", "--store", "postgresql://u:p@w@h/db"]))
    assert "unescaped @" in line and "%40" in line and "w@h" not in line


def test_campaign_show_and_list_mask_the_password(tmp_path, monkeypatch, capsys) -> None:
    url = f"postgresql://nimo:{SECRET}@127.0.0.1:1/nimo"   # nothing listens on port 1
    monkeypatch.setenv("NIMO_STORE_URL", url)
    for argv in (["campaign", "status", "x"], ["campaign", "list"]):
        line = one_error(capsys, main(argv))
        assert SECRET not in line and "nimo:***@127.0.0.1:1" in line


# -- 14: CSV ------------------------------------------------------------------------------
def test_a_non_numeric_cell_in_the_first_rows_names_line_and_column(tmp_path, capsys) -> None:
    path = grid_csv(tmp_path / "d.csv", lambda t: t.replace("\n2,5,11\n", "\n2,n/a,11\n"))
    with pytest.raises(DataError, match=r"d\.csv:3: column 'mem' is not a number: 'n/a'"):
        load_dataset(path)               # before: 'mem' silently dropped as an attribute
    line = one_error(capsys, main(["replay", str(path), "--quiet"]))
    assert ":3:" in line and "'mem'" in line
    with pytest.raises(DataError, match=r":3: column 'mem' is not a number"):
        load_dataset(path, ["cpu", "mem"])


def test_a_text_column_throughout_is_not_an_attribute(tmp_path) -> None:
    path = grid_csv(tmp_path / "d.csv",
                    lambda t: "\n".join(ln + (",site" if i == 0 else f",h{i % 2}")
                                        for i, ln in enumerate(t.splitlines())) + "\n")
    assert [a.name for a in load_dataset(path).space.attributes] == ["cpu", "mem"]
    # named, a column of text throughout is a categorical attribute (issue 12), not an error
    named = load_dataset(path, ["cpu", "site"])
    assert named.categories == {"site": ("h0", "h1")}


def test_duplicate_headers_are_refused(tmp_path, capsys) -> None:
    path = grid_csv(tmp_path / "d.csv", lambda t: t.replace("cpu,mem,T", "cpu,T,T", 1))
    line = one_error(capsys, main(["replay", str(path), "--quiet"]))
    assert "d.csv:1: duplicate column 'T' (columns 2 and 3)" in line


def test_bom_and_crlf_read_as_plain_utf8(tmp_path) -> None:
    plain = load_dataset(grid_csv(tmp_path / "plain.csv"))
    bom = load_dataset(grid_csv(tmp_path / "bom.csv",
                                lambda t: "\ufeff" + t.replace("\n", "\r\n")))
    assert [a.name for a in bom.space.attributes] == ["cpu", "mem"]   # not '\ufeffcpu'
    assert list(bom.runs) == list(plain.runs)
    assert [s.meta["line"] for a in bom.runs for s in bom.runs[a]] == \
        [s.meta["line"] for a in plain.runs for s in plain.runs[a]]


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-Infinity", "1e999"])
def test_non_finite_cells_are_refused_naming_line_and_column(tmp_path, cell, capsys) -> None:
    path = grid_csv(tmp_path / "d.csv", lambda t: t.replace("\n3,6,12\n", f"\n3,{cell},12\n"))
    line = one_error(capsys, main(["replay", str(path), "--quiet"]))
    assert "d.csv:4: column 'mem' is not a finite number" in line


def test_undecodable_files_are_one_line(tmp_path, capsys) -> None:
    csv_path = tmp_path / "d.csv"
    csv_path.write_bytes(b"cpu,T\n1,2\n2,\xff3\n")
    line = one_error(capsys, main(["replay", str(csv_path), "--quiet"]))
    assert "d.csv:3: not UTF-8 text" in line
    design = tmp_path / "design.yaml"
    design.write_bytes(b"extends: recommended\nname: caf\xe9\n")
    line = one_error(capsys, main(["replay", str(csv_path), "--design", str(design)]))
    assert "design.yaml:2: design is not UTF-8 text" in line
    inventory = tmp_path / "inv.yaml"
    inventory.write_bytes(EXAMPLE.read_bytes().replace(b"lab-example", b"lab-\xe9xample"))
    line = one_error(capsys, main(["doctor", str(inventory)]))
    assert "inv.yaml:4: inventory is not UTF-8 text" in line


# -- 14: YAML -----------------------------------------------------------------------------
def test_duplicate_yaml_keys_are_refused_naming_file_and_key(tmp_path, capsys) -> None:
    design = tmp_path / "d.yaml"
    design.write_text("extends: recommended\nstop: {max_runs: 6}\nstop: {max_runs: 60}\n")
    with pytest.raises(ConfigError, match=r"d\.yaml:3: design: duplicate key 'stop'"):
        load_design(str(design))
    inventory = tmp_path / "inv.yaml"
    text = EXAMPLE.read_text()
    inventory.write_text(text.replace("  timeout_s: 120\n", "  timeout_s: 120\n  timeout_s: 5\n"))
    line = one_error(capsys, main(["doctor", str(inventory)]))
    assert "inv.yaml:" in line and "duplicate key 'timeout_s'" in line


def test_yaml_merge_keys_may_still_override() -> None:
    from workbench.yamlfile import parse_yaml

    assert parse_yaml("b: &b {x: 1}\nc:\n  <<: *b\n  x: 2\n")["c"] == {"x": 2}


def inventory_with(tmp_path: Path, edit) -> Path:
    doc = yaml.safe_load(EXAMPLE.read_text())
    edit(doc)
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("edit,key", [
    (lambda d: d["knobs"][0].update(levels=[0.5, float("nan")]), "knobs[0].levels[1]"),
    (lambda d: d["knobs"][2].update(levels=[0, float("inf")]), "knobs[2].levels[1]"),
    (lambda d: d["application"].update(timeout_s=float("inf")), "application.timeout_s"),
    (lambda d: d["application"].update(timeout_s=float("nan")), "application.timeout_s"),
    (lambda d: d["application"]["dataset"].update(size_mb=float("nan")),
     "application.dataset.size_mb"),
])
def test_non_finite_inventory_numbers_are_refused(tmp_path, edit, key, capsys) -> None:
    path = inventory_with(tmp_path, edit)
    line = one_error(capsys, main(["doctor", str(path)]))
    assert f"inv.yaml: {key}:" in line and "finite" in line


@pytest.mark.parametrize("body,key", [
    ("stop: {max_runs: .nan}", "stop.max_runs"),
    ("stop: {max_runs: .inf}", "stop.max_runs"),
    ("stop: {error_pct: .nan}", "stop.error_pct"),
    ("stop: {max_learning_s: .inf}", "stop.max_learning_s"),
    ("test_size: .inf", "test_size"),
    ("test_size: .nan", "test_size"),
    ("improvement_threshold_pct: -.inf", "improvement_threshold_pct"),
    ("predictors: {max_terms: .inf}", "predictors"),
    ("predictors: {min_improvement: .nan}", "predictors.min_improvement"),
])
def test_non_finite_design_numbers_are_refused(tmp_path, body, key, capsys) -> None:
    design = tmp_path / "d.yaml"
    design.write_text(f"extends: recommended\n{body}\n")
    data = grid_csv(tmp_path / "data.csv", rows=60)
    line = one_error(capsys, main(["replay", str(data), "--design", str(design), "--quiet",
                                   "--external-test", "2"]))
    assert key in line


# -- 15: read-only commands, in-memory stores ------------------------------------------------
@pytest.mark.parametrize("argv", [["campaign", "list"], ["campaign", "status", "c"],
                                  ["campaign", "log", "c"], ["campaign", "samples", "c"],
                                  ["plot", "c"],
                                  ["model", "export", "c", "-o", "m.json"]])
def test_read_only_commands_never_create_a_store(tmp_path, argv, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    typo = tmp_path / "nimo.bd"
    line = one_error(capsys, main([*argv, "--store", f"sqlite:///{typo}"]))
    assert str(typo) in line and "does not exist" in line
    assert not typo.exists() and not (tmp_path / "m.json").exists()


def test_api_readers_never_create_a_store(tmp_path) -> None:
    import nimo

    typo = tmp_path / "nimo.bd"
    with pytest.raises(StoreError, match="does not exist"):
        nimo.campaign_records(f"sqlite:///{typo}")
    assert not typo.exists()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_campaigns_refuse_an_in_memory_store(tmp_path, url, monkeypatch, capsys) -> None:
    data = str(grid_csv(tmp_path / "d.csv", rows=60))
    line = one_error(capsys, main(["replay", data, "--store", url, "--quiet",
                                   "--external-test", "2"]))
    assert "in memory" in line
    line = one_error(capsys, main(["campaign", "submit", "q", "--replay", data, "--store", url]))
    assert "in memory" in line
    monkeypatch.setenv("NIMO_STORE_URL", url)
    line = one_error(capsys, main(["replay", data, "--name", "x", "--quiet",
                                   "--external-test", "2"]))
    assert "in memory" in line
    from workbench.service import Service
    with pytest.raises(StoreError, match="in memory"):
        Service(store_url=url)


# -- 16: permissions ---------------------------------------------------------------------
def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_sqlite_stores_are_owner_only(tmp_path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "nimo.db"
        open_store(f"sqlite:///{path}").close()
        assert mode(path) == 0o600
        existing = tmp_path / "shared.db"
        existing.touch(mode=0o640)
        existing.chmod(0o640)
        open_store(f"sqlite:///{existing}").close()
        assert mode(existing) == 0o640        # an existing store keeps the mode its owner set
    finally:
        os.umask(old)


def test_lab_key_files_and_dirs_are_owner_only(tmp_path) -> None:
    from workbench.lab.sshd import private_dir, write_private

    old = os.umask(0)
    try:
        d = private_dir(tmp_path / "lab" / "hosts")
        assert mode(d) == 0o700
        f = d / "known_hosts"
        f.write_text("old\n")
        f.chmod(0o666)
        write_private(f, "new\n")
        assert mode(f) == 0o600 and f.read_text() == "new\n"
        write_private(d / "fresh", "x")
        assert mode(d / "fresh") == 0o600
    finally:
        os.umask(old)


@pytest.mark.parametrize("argv", [["serve", "--poll", "nan"], ["serve", "--poll", "inf"],
                                  ["serve", "--remeasure-hours", "nan"]])
def test_non_finite_command_line_numbers_are_refused(argv, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main([*argv, "--store", "sqlite:///never-made.db"])
    assert e.value.code == 2
    assert "is not a finite number" in capsys.readouterr().err
    assert not Path("never-made.db").exists()
