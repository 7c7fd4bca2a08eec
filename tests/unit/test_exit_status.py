"""Exit statuses and summaries of `nimo campaign run|resume` and `nimo replay` (issue 10,
items 2, 5 and 6): 0 only when the stop rule ended the campaign with a model; the summary
says failures first; --json checked at start and rewritten after every run."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import yaml
from campaign_fakes import FakePlanner, FakeRunner

import nimo.campaign.lifecycle as lifecycle
import workbench.campaigns as campaigns
from nimo.campaign.metrics import extrapolated_knobs, measured_values
from nimo.planner.active import NOTHING_TO_PICK
from nimo.planner.baselines import EVERYTHING_MEASURED
from nimo.planner.strategies.stop import unreached
from nimo.records import RunOutcome, RunRequest, RunStatus
from nimo.store import open_store
from workbench.cli import main
from workbench.executor.stops import FailureBudgetExceeded, FatalSetupError
from workbench.exitstatus import Exit, model_warnings, stop_kind, unmeasured_knobs, verdict
from workbench.synthetic import write_all


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """A stored campaign whose resume runs FakePlanner (6 samples) on the runner given."""
    monkeypatch.setattr(lifecycle, "build_planner",
                        lambda space, design, seed, *kind: FakePlanner(seed, budget=6))
    url = f"sqlite:///{tmp_path}/s.db"

    def make(runner: FakeRunner, holdout: int = 0) -> tuple[str, str]:
        with open_store(url) as store:
            store.create_campaign("c", "replay", design={}, seed=1,
                                  spec={"holdout": holdout})
        monkeypatch.setattr(campaigns, "open_runner_for", lambda info: runner)
        return url, "c"
    return make


def resume(url: str, *extra: str) -> int:
    return main(["campaign", "resume", "c", "--store", url, "--quiet", *extra])


def status(url: str) -> tuple[str, str | None]:
    with open_store(url) as store:
        info = store.campaign("c")
    return info.status, info.stopped_because


def test_a_campaign_that_ends_by_its_stop_rule_exits_0(fake, capsys) -> None:
    url, _ = fake(FakeRunner())
    assert resume(url) == Exit.OK
    out = capsys.readouterr().out
    assert out.startswith("c: stopped by the stop rule (budget), runs 6")
    assert "FAILED" not in out and "failed" not in out


def test_holdout_failures_come_first_and_exit_4(fake, capsys) -> None:
    url, _ = fake(FakeRunner(fail=[7, 8]), holdout=3)  # 6 learned runs, then 7, 8, 9
    assert resume(url) == Exit.RUNS_FAILED
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("c: 2 of 3 holdout runs failed: the holdout figures cover 1 runs "
                        "only")
    assert "holdout MAPE" in lines[1]


def test_no_model_exits_3(fake, capsys) -> None:
    url, _ = fake(FakeRunner(fail=range(1, 100)))
    assert resume(url) == Exit.FAILED
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("c: FAILED: ")
    assert "runs failed (last: run" in out
    assert status(url)[0] == "failed"


class Raising(FakeRunner):
    def __init__(self, at: int, error: BaseException) -> None:
        super().__init__()
        self.at, self.error = at, error

    def run(self, request: RunRequest) -> RunOutcome:
        if request.run == self.at:
            raise self.error
        return super().run(request)


def test_failure_policy_exits_4_and_marks_the_campaign_failed(fake, capsys) -> None:
    url, _ = fake(Raising(3, FailureBudgetExceeded("inv.yaml: 3 failed runs reached "
                                                   "policies.max_failures=3")))
    assert resume(url) == Exit.RUNS_FAILED
    err = capsys.readouterr().err
    assert "FAILED: runs failed beyond policy" in err and "max_failures=3" in err
    assert status(url) == ("failed", "inv.yaml: 3 failed runs reached policies.max_failures=3")


def test_fatal_setup_error_exits_2_with_one_line(fake, capsys) -> None:
    url, _ = fake(Raising(2, FatalSetupError("run 2 on c1, prepare: c1: host key mismatch")))
    assert resume(url) == Exit.USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "host key mismatch" in err
    assert status(url)[0] == "failed"
    with open_store(url) as store:  # the refused run is not recorded as failed
        assert [r.run for r in store.runs("c") if r.status is RunStatus.FAILED] == []


def test_ctrl_c_exits_130_and_sigterm_143(fake, capsys, monkeypatch) -> None:
    url, _ = fake(FakeRunner(crash_at=3))
    assert resume(url) == 130
    assert "interrupted" in capsys.readouterr().err and status(url)[0] == "interrupted"

    class Killed(FakeRunner):
        def run(self, request: RunRequest) -> RunOutcome:
            if request.run == 5:
                os.kill(os.getpid(), signal.SIGTERM)
            return super().run(request)

    monkeypatch.setattr(campaigns, "open_runner_for", lambda info: Killed())
    assert resume(url) == 128 + signal.SIGTERM
    assert status(url)[0] == "interrupted"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back


def test_json_is_checked_before_anything_runs(tmp_path, capsys) -> None:
    write_all(tmp_path)
    missing = tmp_path / "out" / "run.json"
    url = f"sqlite:///{tmp_path}/never.db"
    for argv in (["replay", str(tmp_path / "cpu_bound.csv"), "--json", str(missing),
                  "--store", url, "--name", "x"],
                 ["campaign", "run", "nowhere.yaml", "--json", str(missing), "--store", url],
                 ["campaign", "resume", "x", "--json", str(tmp_path), "--store", url]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--json {argv[argv.index('--json') + 1]}" in err
    assert not (tmp_path / "never.db").exists()


def test_json_is_rewritten_after_every_run(fake, tmp_path) -> None:
    out = tmp_path / "live.json"
    seen: list[int] = []

    class Watching(FakeRunner):
        def run(self, request: RunRequest) -> RunOutcome:
            if request.run in (3, 5):  # batches of two: 1-2 are told before 3 runs
                doc = json.loads(out.read_text())
                seen.append(len(doc["iterations"]))
                assert doc["final"]["in_progress"] is True and doc["stopped_because"] is None
            if request.run == 5:
                raise KeyboardInterrupt
            return super().run(request)

    url, _ = fake(Watching())
    assert resume(url, "--json", str(out)) == 130
    assert seen == [2, 4]
    assert len(json.loads(out.read_text())["iterations"]) == 4
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".live")] == []


def test_replay_exit_0_and_budget_named(tmp_path, capsys) -> None:
    write_all(tmp_path)
    design = tmp_path / "d.yaml"  # the recommended preset, every key given, with a budget
    raw = yaml.safe_load((Path(__file__).parents[2] / "designs" / "recommended.yaml").read_text())
    raw["name"] = "budget6"
    raw["stop"]["max_runs"] = 6
    design.write_text(yaml.safe_dump(raw))
    code = main(["replay", str(tmp_path / "cpu_bound.csv"), "--quiet", "--design",
                 str(design), "--external-test", "10"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "stopped by a user budget: run budget spent" in out


def test_stop_kinds_name_what_ended_learning() -> None:
    assert stop_kind("run budget spent (6 runs >= max_runs 6)") == "a user budget"
    assert stop_kind("learning-time budget spent (7 s >= max_learning_s 5)") == "a user budget"
    assert stop_kind("internal error 3.65% <= 5% with 21 training samples") == "the error target"
    assert stop_kind("internal error plateaued at 7.10% (no 0.5-point gain in 4 runs)") == \
        "the error plateau rule"
    assert stop_kind(None) == "the stop rule"
    for left in (NOTHING_TO_PICK, EVERYTHING_MEASURED):  # not the appended error's words
        assert stop_kind(left + unreached(8.05, 5.0)) == "no assignment left"
    assert stop_kind("run budget spent (9 runs >= max_runs 9)" + unreached(3.1, 5.0)) == \
        "a user budget"


def test_verdict_of_documents() -> None:
    ok = {"name": "x", "final": {"runs": 2}, "model": {"m": 1}, "stopped_because": "b",
          "iterations": [{"run": 1, "assignment": {"a": 1}, "status": "done"},
                         {"run": 2, "assignment": {"a": 2}, "status": "done"}]}
    assert verdict(ok).status == Exit.OK and verdict(ok).problems == ()
    streak = {**ok, "stopped_because": "10 failed runs in a row (last: x)"}
    assert verdict(streak).status == Exit.FAILED
    assert verdict({**ok, "model": None}).status == Exit.FAILED


def test_a_knob_whose_every_varied_run_failed_is_reported() -> None:
    runs = [({"cpu": 1.0, "delay": 0.0}, True), ({"cpu": 2.0, "delay": 0.0}, True),
            ({"cpu": 1.0, "delay": 5.0}, False), ({"cpu": 2.0, "delay": 10.0}, False)]
    (u,) = unmeasured_knobs(runs)
    assert (u.knob, u.ok_levels, u.failed_levels, u.failed_runs) == ("delay", (0.0,),
                                                                     (5.0, 10.0), 2)
    assert "knob delay was never measured" in u.warning()
    assert unmeasured_knobs(runs + [({"cpu": 1.0, "delay": 5.0}, True)]) == []


def test_levels_beyond_the_training_runs_are_reported_per_knob() -> None:
    levels = {"cpu": [0.25, 0.5, 1.0], "block": [4.0, 64.0, 1024.0, 2048.0, 4096.0, 8192.0],
              "delay": [0.0, 5.0]}
    training = [{"cpu": 0.25, "block": 64.0, "delay": 0.0},
                {"cpu": 1.0, "block": 4.0, "delay": 5.0}]
    (e,) = extrapolated_knobs(levels, measured_values(training))
    assert (e.knob, e.measured, e.beyond) == ("block", (4.0, 64.0),
                                              (1024.0, 2048.0, 4096.0, 8192.0))
    assert e.warning() == ("knob block was measured at 4 .. 64 only; predictions at 1024, "
                           "2048, 4096 and 1 more extrapolate, and the internal error does "
                           "not cover them")
    assert extrapolated_knobs(levels, measured_values(
        training + [{"cpu": 0.5, "block": 8192.0, "delay": 0.0}])) == []
    assert extrapolated_knobs(levels, {"block": [4.0, 8192.0]}) == []  # a recorded range


def test_the_verdict_warns_of_extrapolation_from_training_runs_only() -> None:
    model = {"attributes": [{"name": "a", "levels": [1.0, 2.0, 3.0]},
                            {"name": "b", "levels": [0.0, 5.0]}]}
    its = [{"run": 1, "assignment": {"a": 1.0, "b": 0.0}, "status": "done",
            "purpose": "reference"},
           {"run": 2, "assignment": {"a": 2.0, "b": 0.0}, "status": "done", "purpose": "train"},
           {"run": 3, "assignment": {"a": 3.0, "b": 0.0}, "status": "done", "purpose": "test"},
           {"run": 4, "assignment": {"a": 3.0, "b": 5.0}, "status": "failed",
            "purpose": "train"}]
    doc = {"name": "x", "final": {"runs": 4}, "model": model, "stopped_because": "b",
           "iterations": its}
    warnings = verdict(doc).warnings
    assert len(warnings) == 2
    assert warnings[0].startswith("knob b was never measured")  # not reported twice
    assert warnings[1].startswith("knob a was measured at 1 .. 2 only; predictions at 3 ")
    assert verdict({**doc, "model": {"kind": "family"}}).warnings == warnings[:1]


def test_the_models_own_record_of_its_fitted_values_comes_first() -> None:
    """A design may fit PBDF runs (or reuse one as its reference); the model's record
    counts them, the runs' purposes do not."""
    attributes = [{"name": "a", "levels": [1.0, 2.0, 3.0]}]
    its = [{"run": 1, "assignment": {"a": 1.0}, "status": "done", "purpose": "pbdf"},
           {"run": 2, "assignment": {"a": 2.0}, "status": "done", "purpose": "train"},
           {"run": 3, "assignment": {"a": 3.0}, "status": "done", "purpose": "pbdf"}]
    plain = model_warnings({"attributes": attributes}, its)
    assert plain == ("knob a was measured at 2 only; predictions at 1, 3 extrapolate, and "
                     "the internal error does not cover them",)
    recorded = {"attributes": attributes, "training": {"measured_range": {"a": [1.0, 3.0]}}}
    assert model_warnings(recorded, its) == ()
    for garbled in ("1..3", [1.0, "x"], [], None, [float("nan"), 3.0]):
        model = {"attributes": attributes, "training": {"measured_range": {"a": garbled}}}
        assert model_warnings(model, its) == plain


def test_an_interruption_names_ctrl_c_or_the_signal_never_empty_brackets(monkeypatch, capsys):
    from nimo.errors import interrupt_reason
    from workbench.exitstatus import Terminated

    assert interrupt_reason(KeyboardInterrupt()) == "Ctrl-C"
    assert interrupt_reason(Terminated(15)) == "signal 15"

    import workbench.cli as cli
    import workbench.cli.datasets as datasets

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(datasets, "cmd_list", interrupted)
    assert cli.main(["datasets"]) == 130
    assert capsys.readouterr().err.strip() == "nimo datasets: interrupted (Ctrl-C)"


def test_a_busy_campaign_is_reported_by_the_command_that_met_it(capsys):
    from workbench.cli.campaign import run_campaign
    from workbench.exitstatus import Exit
    from workbench.ownership import Busy

    def busy():
        raise Busy("campaign 'x' is run by pid 7 on h")

    assert run_campaign(busy, "x", lambda doc, judged: None, command="replay") == Exit.BUSY
    assert capsys.readouterr().err.strip() == ("nimo replay: busy: campaign 'x' is run by "
                                               "pid 7 on h")


def test_ctrl_c_while_the_summary_of_a_finished_campaign_prints_changes_nothing(capsys):
    """The campaign is done and stored: a Ctrl-C or SIGTERM while its summary prints is not
    an interruption (it had exited 130 or 143 with a resume hint for a done campaign)."""
    from workbench.cli.campaign import run_campaign

    class Done:
        def to_dict(self):
            return {"final": {"runs": 3}, "iterations": [], "stopped_because": "target met"}

    printed: list[str] = []

    def summarize(doc, judged):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        printed.append(f"{doc['final']['runs']} runs")

    assert run_campaign(Done, "c", summarize) == int(verdict(Done().to_dict()).status)
    assert printed == ["3 runs"] and "interrupted" not in capsys.readouterr().err
