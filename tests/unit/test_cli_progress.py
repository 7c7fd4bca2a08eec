"""The progress status line: runs out of the budget, elapsed, learning time, error, ETA and
runs in flight (terminal only); files get only the convergence log."""

from __future__ import annotations

import io

from nimo.records import IterationRecord, RunOutcome, RunRequest, RunStatus, Sample
from workbench.cli.progress import ProgressTable, format_clock
from workbench.designs import load_design


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _told(table: ProgressTable, run: int, error: float, learning: float) -> None:
    req = RunRequest(run, {"cpu": 1.0}, "train", "f_a")
    record = IterationRecord(run=run, assignment={"cpu": 1.0}, purpose="train",
                             predictor="f_a", attributes={}, acquisition_s=learning,
                             internal_error_pct=error)
    table.iteration(RunOutcome(req, RunStatus.DONE, Sample({"cpu": 1.0}, T=1.0)), record, None)


def test_status_line_counts_against_the_budget_with_eta_and_runs_in_flight() -> None:
    table = ProgressTable(Tty(), budget=10)
    table.asked([RunRequest(r, {"cpu": float(r)}, "train") for r in (1, 2, 3)])
    t0 = table.started
    assert t0 is not None
    _told(table, 1, 20.0, 90.0)
    _told(table, 2, 12.5, 200.0)
    text = table.status_text(now=t0 + 40.0)
    assert text.startswith("2/10 runs  elapsed 0:40  learning 3.3m  error 12.5%")
    assert "ETA 2:40" in text  # 20 s per run, 8 runs left
    assert "in flight 1: run 3 running since" in text and "cpu=3" in text


def test_without_a_budget_the_status_shows_the_count_and_no_eta() -> None:
    table = ProgressTable(Tty())
    table.asked([RunRequest(1, {"cpu": 1.0}, "train")])
    _told(table, 1, 5.0, 30.0)
    text = table.status_text()
    assert text.startswith("1 runs") and "ETA" not in text and "in flight" not in text


def test_budget_from_a_design_and_plain_lines_in_a_file(tmp_path) -> None:
    design = tmp_path / "d.yaml"
    design.write_text("extends: recommended\nstop: {max_runs: 6}\n")
    assert ProgressTable.for_design(load_design(str(design))).budget == 6
    assert ProgressTable.for_design({"stop": {"max_runs": 4}}).budget == 4
    assert ProgressTable.for_design(load_design("recommended")).budget is None
    out = io.StringIO()
    table = ProgressTable(out, budget=6)
    table.asked([RunRequest(1, {"cpu": 1.0}, "train")])
    _told(table, 1, 5.0, 30.0)
    lines = out.getvalue().splitlines()
    assert lines[0] == ProgressTable.HEADER and len(lines) == 2 and "\r" not in out.getvalue()


def test_format_clock() -> None:
    assert [format_clock(s) for s in (0, 59.6, 61, 3600 + 62)] == ["0:00", "1:00", "1:01",
                                                                   "1:01:02"]
