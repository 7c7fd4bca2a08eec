"""Batches of training runs: the design's ``batch`` (or the runner's concurrency) asks for
several distinct, spread-out runs at once; resume asks exactly the same batches."""

from __future__ import annotations

import io
from collections.abc import Sequence
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
import yaml

from nimo.campaign import Campaign, Observer, with_batch
from nimo.errors import ConfigError
from nimo.planner import make_planner, parse_design
from nimo.planner.strategies.support import EnergyCriterion
from nimo.records import RunOutcome, RunRequest
from nimo.store import open_store
from workbench.campaigns import launch_replay, resume
from workbench.cli import main
from workbench.cli.campaign_show import status_doc, status_lines
from workbench.replay import ReplayOptions, ReplayRunner

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets" / "synthetic" / "prefetch_interaction.csv"
RECOMMENDED = yaml.safe_load((ROOT / "designs" / "recommended.yaml").read_text())


def replay_runner() -> ReplayRunner:
    return ReplayRunner.open(ReplayOptions(str(DATA), external_test=10, seed=2))


class Batches(Observer):
    def __init__(self) -> None:
        self.batches: list[list[RunRequest]] = []

    def asked(self, requests: Sequence[RunRequest]) -> None:
        self.batches.append(list(requests))


def campaign(design: dict, seed: int = 4) -> tuple[list[list[RunRequest]], Campaign]:
    runner = replay_runner()
    spy = Batches()
    planner = make_planner(runner.space, design, seed, runner.kind)
    loop = Campaign(planner, runner, observers=[spy], design=design)
    loop.run()
    return spy.batches, loop


def key(req: RunRequest) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(req.assignment.items()))


def preset(name: str) -> dict:
    return yaml.safe_load((ROOT / "designs" / f"{name}.yaml").read_text())


@pytest.mark.parametrize("name", ["recommended", "recommended-v2", "recommended-v1"])
def test_a_batch_holds_distinct_runs_never_asked_before(name: str) -> None:
    batches, loop = campaign({**preset(name), "batch": 4})
    training = [b for b in batches if len(b) > 1]
    assert len(training) >= 3 and all(len(b) <= 4 and b[0].purpose == "train"
                                      for b in training)
    assert sum(len(b) == 4 for b in training) >= len(training) - 1  # a short last one only
    asked = [key(r) for b in batches for r in b]
    assert len(asked) == len(set(asked))  # never the same assignment twice, in or across
    held_out = {tuple(sorted(loop.planner.space.as_dict(a).items()))  # type: ignore[attr-defined]
                for a in loop.planner.held_out}  # type: ignore[attr-defined]
    assert not held_out & set(asked)


def test_placed_picks_count_as_measured_in_the_support_point_criterion() -> None:
    space = replay_runner().space
    pool = list(space.candidates)
    first = EnergyCriterion(space)
    first.update(pool[:3])
    a = pool[int(np.argmin(first.of(pool[3:]))) + 3]
    rest = [c for c in pool[3:] if c != a]
    measured = EnergyCriterion(space)
    measured.update([*pool[:3], a])
    # the next pick of a batch sees `a` exactly as if it had been measured ...
    assert first.of(rest, placed=[a]) == pytest.approx(measured.of(rest), rel=1e-12)
    # ... so candidates near it lose more than those far from it (the batch spreads out)
    grown = first.of(rest, placed=[a]) - first.of(rest)
    dist = [np.abs(np.subtract(c, a)).sum() for c in rest]
    assert grown[int(np.argmin(dist))] > grown[int(np.argmax(dist))]
    assert first.seen == set(pool[:3])  # placed picks are not remembered


def plan(design: dict, seed: int) -> list[list[tuple[tuple[str, float], ...]]]:
    return [[key(r) for r in b] for b in campaign(design, seed)[0]]


def test_batches_are_deterministic_for_a_seed() -> None:
    design = {**RECOMMENDED, "batch": 3}
    assert plan(design, 4) == plan(design, 4)
    rand = {"strategy": "random", "error": "loo", "batch": 3, "stop": {"max_runs": 10}}
    assert plan(rand, 4) == plan(rand, 4) != plan(rand, 5)


def test_batch_one_is_the_unbatched_plan() -> None:
    unset, a = campaign(dict(RECOMMENDED))
    one, b = campaign({**RECOMMENDED, "batch": 1})
    assert all(len(x) == 1 for x in unset if x[0].purpose == "train")
    assert [[key(r) for r in x] for x in unset] == [[key(r) for r in x] for x in one]
    assert [r.to_dict() for r in a.records] == [r.to_dict() for r in b.records]
    assert "batch" not in parse_design(RECOMMENDED).to_dict()  # recorded form unchanged
    assert parse_design({**RECOMMENDED, "batch": 1}).to_dict()["batch"] == 1


def test_random_baseline_batches_distinct_random_picks() -> None:
    design = {"strategy": "random", "error": "loo", "batch": 3,
              "stop": {"error_pct": 0, "max_runs": 11}}
    batches, _ = campaign(design)
    assert [len(b) for b in batches] == [1, 3, 3, 3, 1]  # reference, then within max_runs
    asked = [key(r) for b in batches for r in b]
    assert len(asked) == len(set(asked)) == 11


def test_a_batch_never_overshoots_max_runs() -> None:
    design = {**RECOMMENDED, "batch": 4,
              "stop": {**RECOMMENDED["stop"], "error_pct": 0, "max_runs": 10}}
    batches, loop = campaign(design)
    assert sum(len(b) for b in batches) == 10 == len(loop.records)
    assert [len(b) for b in batches][-1] == 1  # 1 + 4 + 4 + 1


@pytest.mark.parametrize("value, words", [(0, "0 is out of range"),
                                          ("two", "must be an integer, got str"),
                                          (True, "must be an integer")])
def test_a_bad_batch_is_a_one_line_error_naming_the_key(value, words) -> None:
    with pytest.raises(ConfigError, match=words) as err:
        parse_design({"batch": value}, where="d.yaml")
    assert "batch" in str(err.value) and "\n" not in str(err.value)


def test_the_cli_refuses_a_bad_batch_in_one_line(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**RECOMMENDED, "batch": -2}))
    code = main(["replay", str(DATA), "--design", str(bad), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "batch" in err and "bad.yaml" in err and len(err.splitlines()) == 1


def test_an_unset_batch_becomes_the_runners_concurrency_when_created() -> None:
    assert with_batch({"name": "x"}, 4)["batch"] == 4
    assert with_batch({"name": "x", "batch": 1}, 4)["batch"] == 1  # the design's own wins
    assert "batch" not in with_batch({"name": "x"}, 1)  # absent means 1


class Concurrent(ReplayRunner):
    """A replay runner that claims 3 runs at once and dies at run ``die_at`` (a SIGKILL)."""

    die_at: int | None = None

    @property
    def concurrency(self) -> int:
        return 3

    def run(self, request: RunRequest) -> RunOutcome:
        if request.run == self.die_at:
            raise KeyboardInterrupt
        return super().run(request)


def concurrent(die_at: int | None = None) -> Concurrent:
    runner = Concurrent.open(ReplayOptions(str(DATA), external_test=10, seed=2))
    runner.die_at = die_at
    return runner


def test_a_batched_campaign_killed_mid_batch_resumes_to_the_same_result(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    design = dict(RECOMMENDED)  # no batch: the runner's concurrency, 3, is stored
    whole = launch_replay(concurrent(), design=design, seed=6, store_url=url, name="whole",
                          progress=False)
    assert whole.design["batch"] == 3
    with pytest.raises(KeyboardInterrupt):
        launch_replay(concurrent(die_at=6), design=design, seed=6, store_url=url,
                      name="killed", progress=False)  # runs 2-4 done, 5 done, 6 killed
    with open_store(url) as store:
        assert store.campaign("killed").design["batch"] == 3
        assert len(store.outcomes("killed")) == 5
    # the resumed runner runs one at a time: the stored batch, not its concurrency, counts
    resumed = resume("killed", store_url=url, progress=False)
    assert resumed.design["batch"] == 3
    assert [r.to_dict() for r in resumed.iterations] == [r.to_dict() for r in whole.iterations]
    stamp = {"created_at"}
    assert ({k: v for k, v in resumed.model.to_dict().items() if k not in stamp}
            == {k: v for k, v in whole.model.to_dict().items() if k not in stamp})
    with open_store(url) as store:
        lines = status_lines(status_doc(store, "killed"))
        runs = store.runs("killed")
    assert [r.run for r in runs] == list(range(1, len(whole.iterations) + 1))
    assert "design    recommended, batch 3 (up to 3 training runs in flight)" in lines


def test_status_of_an_unbatched_campaign_says_one_run_per_ask(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    launch_replay(replay_runner(), design={**RECOMMENDED, "stop": {"max_runs": 4}}, seed=1,
                  store_url=url, name="c", progress=False)
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["campaign", "status", "c", "--store", url]) == 0
    assert "design    recommended, one training run per ask" in out.getvalue()


def test_wrappers_forward_the_runners_concurrency() -> None:
    from nimo.campaign import ResumingRunner, RetryingRunner

    assert replay_runner().concurrency == 1
    assert RetryingRunner(ResumingRunner({}, concurrent())).concurrency == 3


def test_a_submitted_slurm_campaign_stores_max_jobs_as_its_batch(tmp_path) -> None:
    from test_slurm_units import slurm_doc

    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump(slurm_doc(slurm={"partition": "lab", "max_jobs": 3})))
    url = f"sqlite:///{tmp_path}/q.db"
    with redirect_stdout(io.StringIO()):
        assert main(["campaign", "submit", "q", "--inventory", str(inv), "--store", url]) == 0
        assert main(["campaign", "submit", "r", "--replay", str(DATA), "--store", url]) == 0
    with open_store(url) as store:
        assert store.campaign("q").design["batch"] == 3  # fixed at submit, for every start
        assert "batch" not in store.campaign("r").design  # replay: one at a time
