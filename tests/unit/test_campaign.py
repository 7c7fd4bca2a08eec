"""The campaign loop with small fakes of the Runner and Planner contracts."""

from __future__ import annotations

import io

import numpy as np
import pytest
from campaign_fakes import EXTERNAL, FakePlanner, FakeRunner, LineModel, true_T

from nimo.campaign import (
    Campaign,
    Observer,
    ResumingRunner,
    RetryingRunner,
    StoreRecorder,
    mape_pct,
)
from nimo.errors import StoreError
from nimo.records import RunOutcome, RunRequest, RunStatus, Sample
from nimo.store import open_store
from workbench.cli.progress import ProgressTable


class Spy(Observer):
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def asked(self, requests) -> None:
        self.events += [("asked", r.run) for r in requests]

    def outcome(self, outcome) -> None:
        self.events.append(("outcome", outcome.request.run))

    def iteration(self, outcome, record, model) -> None:
        self.events.append(("iteration", record.run))


def test_loop_order_and_external_mape() -> None:
    spy = Spy()
    result = Campaign(FakePlanner(1), FakeRunner(), external=EXTERNAL, observers=[spy]).run()
    assert result.stopped_because == "budget"
    assert [r.run for r in result.iterations] == list(range(1, 9))  # 8 samples, no failure
    assert spy.events[:6] == [("asked", 1), ("asked", 2), ("outcome", 1), ("outcome", 2),
                              ("iteration", 1), ("iteration", 2)]
    mapes = [r.external_mape_pct for r in result.iterations]
    assert mapes[:2] == [None, None]  # no model before 3 samples
    assert mapes[-1] is not None and mapes[-1] < 1e-6  # the true form is learnable exactly
    d = result.to_dict()
    assert set(d) >= {"design", "iterations", "stopped_because", "final", "model"}
    assert d["final"]["runs"] == 8 and d["final"]["acquisition_s"] == pytest.approx(
        sum(true_T(r.assignment) for r in result.iterations))
    assert set(d["iterations"][0]) >= {"run", "assignment", "purpose", "predictor",
                                       "acquisition_s", "internal_error_pct", "external_mape_pct"}


def test_mape_pct_compares_predictions_with_measurements() -> None:
    class Double(LineModel):
        def __init__(self) -> None:
            pass

        def predict_many(self, X):
            return np.array([2 * true_T({"cpu": x[0], "lat": x[1]}) for x in np.atleast_2d(X)])

    assert mape_pct(Double(), EXTERNAL) == pytest.approx(100.0)
    assert mape_pct(None, EXTERNAL) is None


def test_resume_after_crash_repeats_no_finished_run(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    ref = Campaign(FakePlanner(5), FakeRunner(fail=[3]), external=EXTERNAL).run()

    store = open_store(url)
    store.create_campaign("c", "replay", design={}, seed=5)
    crashed = FakeRunner(fail=[3], crash_at=6)
    with pytest.raises(KeyboardInterrupt):
        Campaign(FakePlanner(5), crashed, observers=[StoreRecorder(store, "c")]).run()
    assert crashed.ran == [1, 2, 3, 4, 5]
    assert store.campaign("c").status == "interrupted"
    # queued with run 5's batch, never finished: marked interrupted by the Ctrl-C itself
    in_flight = [r.run for r in store.runs("c") if r.status is RunStatus.INTERRUPTED]
    assert in_flight == [6] and store.interrupt_in_flight("c") == []

    again = FakeRunner(fail=[3])
    resuming = ResumingRunner(store.outcomes("c"), again)
    result = Campaign(FakePlanner(5), resuming, external=EXTERNAL,
                      observers=[StoreRecorder(store, "c")]).run()
    assert again.ran == [6, 7, 8, 9, 10]
    assert resuming.replayed == [1, 2, 3, 4, 5]
    assert [r.to_dict() for r in result.iterations] == [r.to_dict() for r in ref.iterations]
    assert result.model.to_dict() == ref.model.to_dict()
    runs = store.runs("c")
    assert [r.run for r in runs] == list(range(1, 11))
    assert runs[2].status is RunStatus.FAILED and runs[2].reason == "host vanished"
    assert runs[5].attempts == 2
    assert len(store.samples("c")) == 9
    assert store.campaign("c").status == "done"
    assert store.model("c").model == ref.model.to_dict()


def test_resume_refuses_a_different_plan() -> None:
    stored = {1: RunOutcome(RunRequest(1, {"cpu": 9.0, "lat": 0.0}, "train"), RunStatus.DONE,
                            Sample({"cpu": 9.0, "lat": 0.0}, T=1.0))}
    with pytest.raises(StoreError, match="differs"):
        Campaign(FakePlanner(5), ResumingRunner(stored, FakeRunner())).run()


def test_progress_table_prints_a_line_per_run() -> None:
    out = io.StringIO()
    Campaign(FakePlanner(2, budget=4), FakeRunner(fail=[2]), external=EXTERNAL,
             observers=[ProgressTable(out)]).run()
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:4] == ["run", "purpose", "predictor", "learning"]
    assert len(lines) == 1 + 6 + 1  # header, runs 1-6 (batches of 2), summary
    assert "FAILED: host vanished" in lines[2]
    assert lines[-1].startswith("stopped: budget")


def test_retrying_runner_reports_only_the_last_try() -> None:
    from campaign_fakes import HostBoard, HostRunner

    inner = HostRunner("c", ["h1"], HostBoard(), delay_s=0, flaky=[2, 3])
    seen: list[tuple[int, str]] = []
    runner = RetryingRunner(inner, attempts=2)
    reqs = [RunRequest(i, {"cpu": 1.0, "lat": 0.0}, "train") for i in (1, 2, 3)]
    out = runner.run_many(reqs, on_outcome=lambda o: seen.append((o.request.run, o.status.value)))
    assert [o.status for o in out] == [RunStatus.DONE] * 3
    assert sorted(seen) == [(1, "done"), (2, "done"), (3, "done")]
    assert runner.retried == [2, 3] and inner.ran == [1, 2, 3, 2, 3]
    once = RetryingRunner(HostRunner("c", ["h1"], HostBoard(), delay_s=0, flaky=[1]), 1)
    assert once.run(reqs[0]).reason == "flaky"


def test_a_broken_workbench_stops_the_campaign() -> None:
    result = Campaign(FakePlanner(3, budget=8), FakeRunner(fail=range(3, 100)),
                      max_failed_in_row=4).run()
    assert [r.run for r in result.iterations] == [1, 2, 3, 4, 5, 6]
    assert result.stopped_because == "4 failed runs in a row (last: host vanished)"


def test_progress_lines_stay_aligned_and_show_runs_in_flight_on_a_terminal():
    from nimo.records import IterationRecord
    from workbench.cli.progress import format_record

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    def rec(run: int, predictor: str) -> IterationRecord:
        return IterationRecord(run=run, assignment={"bandwidth_mbit": 20.0}, purpose="train",
                               predictor=predictor, attributes={}, acquisition_s=90.0,
                               internal_error_pct=4.5)

    lines = [format_record(rec(1, "screen:bandwidth_mbit")), format_record(rec(2, "f_a"))]
    assert lines[0].split()[1:3] == ["screen", "bandwidth_m~"]
    assert [ln.index("1.5m") for ln in lines] == [lines[1].index("1.5m")] * 2

    out = Tty()
    table = ProgressTable(out)
    table.asked([RunRequest(3, {"bandwidth_mbit": 20.0}, "train", "f_n")])
    assert "running since" in out.getvalue() and "bandwidth_mbit=20" in out.getvalue()
    table.iteration(RunOutcome(RunRequest(3, {"bandwidth_mbit": 20.0}, "train", "f_n"),
                               RunStatus.DONE, Sample({"bandwidth_mbit": 20.0}, T=5.0), None,
                               0.1, "h", 0.0, 5.0), rec(3, "f_n"), None)
    text = out.getvalue()
    assert "\r\033[K" in text and text.count(ProgressTable.HEADER) == 1
    plain = io.StringIO()  # not a terminal: no transient lines
    ProgressTable(plain).asked([RunRequest(4, {"bandwidth_mbit": 20.0}, "train", "f_n")])
    assert plain.getvalue() == ""


def test_a_campaign_whose_every_run_fails_on_a_small_space_fails_and_resumes(tmp_path) -> None:
    """Nine assignments, every run refused: the candidates run out before ten failures in
    a row. The campaign fails (not a user error, not an interruption), its failed runs are
    open again, and once the hosts work a resume runs them."""
    from campaign_fakes import FormulaRunner

    import nimo.campaign.lifecycle as lifecycle
    import workbench.campaigns as campaigns
    from nimo.space import Attribute, ResourceSpace
    from workbench.designs import load_design
    from workbench.exitstatus import Exit, verdict

    space = ResourceSpace((Attribute("cpu", (0.25, 0.5, 1.0)), Attribute("lat", (0.0, 5.0, 10.0))))
    broken = FormulaRunner(space, lambda a: "mkdir refused on compute1")
    url = f"sqlite:///{tmp_path}/f.db"
    design = load_design("recommended").to_dict()
    with open_store(url) as store:
        info = store.create_campaign("f", "replay", design=design, seed=1, spec={})
        result = lifecycle.execute(store, info, broken)
        assert result.stopped_because.startswith("9 failed runs in a row and no candidate")
        assert result.stopped_because.endswith("(last: mkdir refused on compute1)")
        assert verdict(result.to_dict()).status is Exit.FAILED
        assert store.campaign("f").status == "failed"
        assert store.outcomes("f") == {}  # every failed run is open again
    fixed = FormulaRunner(space, lambda a: Sample(dict(a), T=1.0 / a["cpu"] + a["lat"]))
    again = campaigns.resume("f", store_url=url, progress=False,
                             runner_factory=lambda info: fixed)
    assert any(r.status == "done" for r in again.iterations)
