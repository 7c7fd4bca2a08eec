"""Resume cleans a live campaign's hosts BEFORE marking its in-flight runs interrupted: a
resume killed while cleaning leaves them in flight, and the next resume cleans again."""

from __future__ import annotations

from pathlib import Path

import pytest

from nimo.records import CampaignKind, RunRequest, RunStatus
from nimo.store import open_store
from workbench import campaigns

EXAMPLE = str(Path(__file__).resolve().parents[2] / "inventories" / "example.yaml")


class Killed(BaseException):
    """Stands for the SIGKILL that ends a resume while it cleans."""


def _crashed_live_campaign(url: str) -> None:
    with open_store(url) as store:
        store.create_campaign("live", CampaignKind.LIVE, design={}, seed=1,
                              spec={"inventory": EXAMPLE})  # resume reads its hosts
        store.queue_runs("live", [RunRequest(1, {"cpu": 1.0}, "train")])


def test_a_resume_killed_while_cleaning_leaves_the_run_for_the_next_resume(tmp_path,
                                                                           monkeypatch):
    url = f"sqlite:///{tmp_path}/nimo.db"
    _crashed_live_campaign(url)
    cleaned: list[list[int]] = []

    def clean_then_die(info, runs, store=None):
        cleaned.append([r.run for r in runs])
        raise Killed

    monkeypatch.setattr(campaigns, "clean_hosts", clean_then_die)
    for _ in range(2):
        with pytest.raises(Killed):
            campaigns.resume("live", store_url=url, progress=False,
                             runner_factory=lambda info: None)  # type: ignore[arg-type,return-value]
    assert cleaned == [[1], [1]]  # the second resume cleaned again
    with open_store(url) as store:
        assert [r.status for r in store.runs("live")] == [RunStatus.QUEUED]


def test_a_resume_cleans_what_any_earlier_process_left_not_a_new_campaign(tmp_path,
                                                                           monkeypatch):
    """A process killed between runs leaves no run in flight but may leave its app dirs:
    the resume cleans the hosts too. A campaign that never ran has nothing to clean."""
    from nimo.records import RunOutcome, Sample

    url = f"sqlite:///{tmp_path}/nimo.db"
    with open_store(url) as store:
        for name in ("between", "fresh"):  # left running by a process killed between runs
            store.create_campaign(name, CampaignKind.LIVE, design={}, seed=1,
                                  spec={"inventory": EXAMPLE}, status="running")
        req = RunRequest(1, {"cpu": 1.0}, "train")
        store.queue_runs("between", [req])
        store.record_outcome("between", RunOutcome(req, RunStatus.DONE,
                                                   Sample({"cpu": 1.0}, T=1.0)))
    cleaned: list[tuple[str, list[int]]] = []

    def record_then_die(info, runs, store=None):
        cleaned.append((info.name, [r.run for r in runs]))
        raise Killed

    monkeypatch.setattr(campaigns, "clean_hosts", record_then_die)
    with pytest.raises(Killed):
        campaigns.resume("between", store_url=url, progress=False,
                         runner_factory=lambda info: None)  # type: ignore[arg-type,return-value]
    assert cleaned == [("between", [])]
    with pytest.raises(Exception) as e:  # the fake runner ends it after the (skipped) clean
        campaigns.resume("fresh", store_url=url, progress=False,
                         runner_factory=lambda info: None)  # type: ignore[arg-type,return-value]
    assert not isinstance(e.value, Killed) and cleaned == [("between", [])]
