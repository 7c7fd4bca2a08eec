"""The `nimo` entry point: lazy startup, --version, per-subcommand usage errors, closed pipes,
--quiet still printing the final summary."""

from __future__ import annotations

import errno
import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nimo import __version__
from workbench.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sqlalchemy", "sqlmodel", "paramiko", "numpy", "yaml", "matplotlib")


def nimo(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, env=env, **kw)  # type: ignore[call-overload]


def run_python(code: str) -> str:
    """The standard output of ``python -c CODE`` in a fresh process on this tree (each
    test below prints the modules its command loaded, which only a new process shows)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout


def test_help_and_version_import_no_subcommand_and_no_heavy_library() -> None:
    code = ("import sys\nfrom workbench.cli import main\n"
            "for argv in (['--help'], ['--version']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{HEAVY!r} or m.startswith('workbench.cli.'))))")
    out = run_python(code)
    assert "usage: nimo" in out and f"nimo {__version__}" in out
    assert out.strip().splitlines()[-1] == f"nimo {__version__}"  # nothing loaded


def test_predict_loads_neither_the_planner_nor_the_store(tmp_path: Path) -> None:
    # a scheduler may call `nimo predict` per job: it reads a model file and nothing more
    from benchmarks.cli_startup import models

    for model in models([sys.executable, "-m", "workbench"], tmp_path).values():
        code = ("import sys\nfrom workbench.cli import main\n"
                f"assert main(['predict', {str(model)!r}, 'n=12']) == 0\n"
                "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
                "('sqlalchemy', 'sqlmodel', 'paramiko', 'sklearn') or m.startswith("
                "('nimo.planner', 'nimo.store', 'nimo.campaign.loop')))))")
        out = run_python(code)
        assert out.startswith("T = ")
        assert out.strip().splitlines()[-1].startswith("T = ")  # nothing loaded


def test_datasets_lists_the_presets_without_loading_the_planner() -> None:
    # listing the shipped files reads file names: no design is parsed, so no strategy loads
    code = ("import sys\nfrom workbench.cli import main\n"
            "assert main(['datasets']) == 0\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith("
            "('nimo.planner', 'nimo.predictors', 'scipy')))))")
    out = run_python(code)
    assert "recommended" in out and "memory_cliff" in out
    assert out.strip().splitlines()[-1].startswith("example inventory: ")


def test_help_lists_every_available_command_with_its_help() -> None:
    text = build_parser().format_help()
    for name, (_, help_text) in COMMANDS.items():
        assert name in text and help_text in text
    for module_name, _ in COMMANDS.values():  # every listed subcommand has its module
        assert importlib.util.find_spec(module_name) is not None, module_name


def test_unknown_option_of_a_subcommand_shows_that_subcommands_usage(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["design", "pb", "--factors", "3", "--bogus"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith("usage: nimo design pb ")
    assert "nimo design pb: error: unrecognized arguments: --bogus" in err


def test_unknown_option_of_a_nested_command_names_the_nested_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["lab", "down", "--all"])
    err = capsys.readouterr().err
    assert err.startswith("usage: nimo lab down ") and "--all" in err


def test_predict_takes_its_options_anywhere_among_the_positionals(
        capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser("predict")
    for argv in (["predict", "m.json", "--level", "0.5", "a=1", "b=2"],
                 ["predict", "m.json", "a=1", "--level", "0.5", "b=2"],
                 ["predict", "--level", "0.5", "m.json", "a=1", "b=2"],
                 ["predict", "m.json", "a=1", "b=2", "--level", "0.5"]):
        args = parser.parse_args(argv)
        assert (args.model, args.values, args.level) == ("m.json", ["a=1", "b=2"], 0.5), argv
    args = parser.parse_args(["predict", "m.json", "a=1"])
    assert (args.values, args.level) == (["a=1"], 0.9)
    with pytest.raises(SystemExit) as e:  # an unknown option is still one
        parser.parse_args(["predict", "m.json", "a=1", "--bogus", "b=2"])
    assert e.value.code == 2
    assert "nimo predict: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_unknown_command_lists_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["frobnicate"])
    err = capsys.readouterr().err
    assert "invalid choice: 'frobnicate'" in err and "'replay'" in err


def test_closed_pipe_ends_quietly_with_the_sigpipe_code() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "design", "pb", "--factors",
                             "150", "--foldover"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert first.startswith(b"X1,X2,") and "Traceback" not in err and err == ""


def test_replay_quiet_prints_no_table_but_the_final_summary() -> None:
    proc = nimo("replay", str(ROOT / "datasets/synthetic/cpu_bound.csv"), "--seed", "2",
                "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "run  purpose" not in proc.stderr + proc.stdout
    summary, *warnings = proc.stdout.strip().splitlines()
    assert summary.startswith("design recommended: ") and "external MAPE" in summary
    assert all(w.startswith("design recommended: warning: ") for w in warnings), warnings


class FullDisk(io.StringIO):
    """A stdout on a full disk: every write fails with ENOSPC."""

    def write(self, s: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no fileno")


def test_stdout_on_a_full_disk_is_one_error_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", FullDisk())
    assert main(["datasets"]) == 2
    err = capsys.readouterr().err
    assert err == "nimo datasets: error: No space left on device\n"


def test_ctrl_c_while_the_command_loads_is_one_line_and_130(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import workbench.cli as cli

    def interrupted(_command: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["replay", "memory_cliff"]) == 130
    assert capsys.readouterr().err == "nimo: interrupted\n"


@pytest.mark.parametrize("package", ["nimo.campaign", "nimo.store"])
def test_a_lazy_package_gives_each_name_it_lists_and_nothing_else(package: str) -> None:
    lazy = importlib.import_module(package)
    assert sorted(set(lazy.__all__) - {"DEFAULT_URL", "open_store"}) == sorted(lazy._MODULE_OF)
    for name, module in lazy._MODULE_OF.items():
        own = importlib.import_module(module)
        assert getattr(lazy, name) is getattr(own, name)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nothing'"):
        lazy.nothing  # noqa: B018
