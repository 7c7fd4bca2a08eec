"""The step probe (benchmarks/learning/step_probe.py): what changed at a step, the printed
tallies, and that probing leaves the campaign as it runs without it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from benchmarks.learning.step_probe import change_of, preserved, score

ROOT = Path(__file__).resolve().parents[2]


def sig(forms: str = "a", residual: list | None = None, blend: float = 0.0) -> dict:
    return {"forms": {"o_a": forms}, "residual": residual, "blend": blend}


def test_a_step_is_classed_by_what_changed() -> None:
    kernel = [[0.0, 1.0], -2.0]
    assert change_of(sig(), sig()) == "refit"
    assert change_of(sig(), sig("b")) == "form"
    assert change_of(sig(), sig(residual=kernel)) == "residual on"
    assert change_of(sig(residual=kernel), sig("b")) == "form + residual off"
    assert change_of(sig(residual=kernel), sig(residual=[[0.5, 1.0], -2.0])) == "refit"
    assert change_of(sig(residual=kernel), sig(residual=[[0.0, 2.0], -2.0])) == "kernel"
    assert change_of(sig(), sig(blend=0.5)) == "blend"


def step(n: int, space: float | None, change: str | None = None, **extra: dict) -> dict:
    return {"n": n, "space": space, **({"change": change} if change else {}), **extra}


def figures(space: float, held: float, loo: float) -> dict:
    return {"held_forms": held, "loo": loo, "space": space}


def test_score_tallies_the_steps_and_both_alternatives() -> None:
    switch = {"new": figures(12.0, 5.0, 4.0), "kept": figures(8.0, 6.0, 5.0),
              "predictors": ["o_n"]}
    off = {"off": 14.0, "on": 9.0, "ratio": 0.85}
    records = [{"case": "c", "seed": 1, "steps": [
        step(5, 50.0), step(6, 9.0, "form"), step(7, 12.0, "form", switch=switch),
        step(8, 14.0, "residual off", residual_off=off), step(9, 14.0, "refit")]}]
    lines = score(records)
    assert lines[0] == "1 campaigns, 4 steps from run 6"
    form = next(line.split() for line in lines if line.startswith("form "))
    assert form[1:] == ["2", "1", "1", "1", "1"]  # 2 steps, rose 1, fell 1, up 1, down 1
    assert ("form switches (1): the new forms against the kept: better by > 1 point 0, "
            "worse 1; under 10% only so 0, over only so 1") in next(
        line for line in lines if line.startswith("form switches"))
    veto = next(line for line in lines if "held_forms is 0% lower" in line)
    assert "(1 switch)" in veto  # 5 < 6: the held-forms rule switches too
    assert any(line.startswith("residual correction off (1): kept on instead: better by "
                               "> 1 point 1, worse 0; under 10% only so 1") for line in lines)
    assert any("folds' ratio 0.8-0.9 (1)" in line for line in lines)


def test_preserved_puts_back_what_the_block_changed() -> None:
    learner = SimpleNamespace(_loo_cache=1, _loo_raw=None, _cv_cache=(3, 4), _fixed_cache=None,
                              _hyper=None, _field=None, _blend=SimpleNamespace(weight=0.5),
                              use_residual=True, fitted={"f_a": "form"})
    with preserved(learner):
        learner.fitted["f_a"] = "other"
        learner.use_residual, learner._cv_cache = False, None
    assert learner.fitted == {"f_a": "form"} and learner.use_residual is True
    assert learner._cv_cache == (3, 4)


PROBED = """
import json, sys, tempfile, contextlib, io
from pathlib import Path
from benchmarks.learning import step_probe
from benchmarks.learning.evaluate import Job, replay_argv, sizes, split_case
from benchmarks.learning.suites import load_suite
from workbench.cli import main

case = load_suite("tuning-small", sys.argv[1], 1)[0]  # form switches and the correction off
judge, external = sizes(case, None, None)
job = Job(case, "recommended", 1, judge, external)
with tempfile.TemporaryDirectory() as d:
    train, _ = split_case(job, Path(d))
    if sys.argv[2] == "probe":  # as step_probe.probe installs it
        from benchmarks.learning.blend_probe import on_learner
        from benchmarks.learning.space import whole_space
        from benchmarks.learning.evaluate import load_case
        X, T, _ = whole_space(load_case(train, job), [], case.attributes)
        step_probe._ACTIVE["probe"] = step_probe.Probe(X, T)
        on_learner("_step_probe", step_probe._grab)
    with contextlib.redirect_stdout(io.StringIO()):
        main(replay_argv(job, train, Path(d) / "r.json"))
    doc = json.loads((Path(d) / "r.json").read_text())
runs = [i["assignment"] for i in doc["iterations"]]
probed = step_probe._ACTIVE.get("probe")
print(json.dumps({"runs": runs, "final": doc["final"]["external_mape_pct"],
                  "steps": len(probed.steps) if probed else None,
                  "scored": [sum(k in s for s in probed.steps) for k in ("switch", "residual_off")]
                  if probed else None}))
"""


def test_the_probe_leaves_the_campaign_as_it_runs_without_it(tmp_path: Path) -> None:
    def run(mode: str) -> dict:
        out = subprocess.run([sys.executable, "-c", PROBED, str(tmp_path), mode], cwd=ROOT,
                             capture_output=True, text=True, check=True,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        return json.loads(out.stdout.strip().splitlines()[-1])

    plain, probed = run("plain"), run("probe")
    assert probed["runs"] == plain["runs"] and probed["final"] == plain["final"]
    assert probed["steps"] == len(plain["runs"]) - 1  # every step from the second run
    switches, residual_off = probed["scored"]
    assert switches >= 1 and residual_off >= 1  # both alternatives scored, and restored


def test_score_reads_a_written_run_from_the_command_line(tmp_path: Path, capsys) -> None:
    from benchmarks.learning.step_probe import main

    records = [{"case": "c", "seed": 1, "steps": [step(5, 20.0), step(6, 8.0, "refit"),
                                                   step(7, None, "form")]}]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(records))
    assert main(["score", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1 campaigns, 1 steps from run 6"  # a step with every candidate run skipped
    assert out[2].split() == ["refit", "1", "0", "1", "0", "1"]
    assert out[-2:] == ["form switches: none scored", "residual correction off: none scored"]
