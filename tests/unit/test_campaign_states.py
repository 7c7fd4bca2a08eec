"""The lifecycle enums: legal and illegal transitions, and the stored form of interrupted."""

from __future__ import annotations

import pytest

from nimo.errors import StoreError
from nimo.records import CampaignStatus, RunPurpose, RunRequest, RunStatus, interrupted_reason

R, C = RunStatus, CampaignStatus


@pytest.mark.parametrize(("old", "new"), [
    (R.QUEUED, R.DONE), (R.QUEUED, R.FAILED), (R.QUEUED, R.INTERRUPTED),
    (R.INTERRUPTED, R.QUEUED), (R.INTERRUPTED, R.DONE), (R.INTERRUPTED, R.FAILED),
    (R.FAILED, R.INTERRUPTED),
])
def test_legal_run_transitions(old: RunStatus, new: RunStatus) -> None:
    assert old.can_become(new)
    old.check(new, run=1)


@pytest.mark.parametrize(("old", "new", "message"), [
    (R.DONE, R.FAILED, "run 4 is already done; it cannot become failed"),
    (R.DONE, R.QUEUED, "run 4 is already done; it cannot become queued"),
    (R.FAILED, R.DONE, "run 4 is already failed; it cannot become done"),
    (R.FAILED, R.QUEUED, "run 4 is already failed; it cannot become queued"),
    (R.QUEUED, R.QUEUED, "run 4 cannot go from queued to queued"),
])
def test_illegal_run_transitions_raise(old: RunStatus, new: RunStatus, message: str) -> None:
    assert not old.can_become(new)
    with pytest.raises(StoreError, match=message):
        old.check(new, run=4)


def test_an_interrupted_run_is_stored_as_before() -> None:
    assert R.INTERRUPTED.stored == "failed" and R.DONE.stored == "done"
    assert R.from_stored("failed", interrupted_reason()) is R.INTERRUPTED
    assert R.from_stored("failed", interrupted_reason("ssh lost")) is R.INTERRUPTED
    assert interrupted_reason("ssh lost") == "interrupted (ssh lost)"
    assert R.from_stored("failed", "ssh lost") is R.FAILED
    assert R.from_stored("queued", None) is R.QUEUED
    assert R.DONE.finished and R.FAILED.finished
    assert not R.INTERRUPTED.finished and not R.QUEUED.finished


@pytest.mark.parametrize(("old", "new"), [
    (C.CREATED, C.RUNNING), (C.QUEUED, C.STARTING), (C.STARTING, C.RUNNING),
    (C.RUNNING, C.DONE), (C.DONE, C.HOLDOUT), (C.HOLDOUT, C.DONE), (C.RUNNING, C.FAILED),
    (C.RUNNING, C.INTERRUPTED), (C.INTERRUPTED, C.RUNNING), (C.DONE, C.RUNNING),
    (C.RUNNING, C.QUEUED), (C.HOLDOUT, C.QUEUED), (C.INTERRUPTED, C.FAILED),
    (C.RUNNING, C.RUNNING), (C.QUEUED, C.RUNNING),
])
def test_legal_campaign_transitions(old: CampaignStatus, new: CampaignStatus) -> None:
    assert old.can_become(new)
    old.check(new, "c")


@pytest.mark.parametrize(("old", "new"), [
    (C.CREATED, C.DONE), (C.CREATED, C.QUEUED), (C.QUEUED, C.DONE), (C.QUEUED, C.FAILED),
    (C.DONE, C.STARTING), (C.FAILED, C.DONE), (C.INTERRUPTED, C.HOLDOUT),
    (C.RUNNING, C.HOLDOUT), (C.STARTING, C.DONE),
])
def test_illegal_campaign_transitions_raise(old: CampaignStatus, new: CampaignStatus) -> None:
    assert not old.can_become(new)
    with pytest.raises(StoreError, match=f"campaign 'c' is {old}; it cannot become {new}"):
        old.check(new, "c")


def test_campaign_states_in_progress_and_active() -> None:
    assert {s for s in C if s.in_progress} == {C.RUNNING, C.HOLDOUT}
    assert {s for s in C if s.active} == {C.STARTING, C.RUNNING, C.HOLDOUT}


def test_enums_are_their_stored_text() -> None:
    req = RunRequest(1, {"cpu": 1.0}, "holdout")
    assert req.purpose is RunPurpose.HOLDOUT and req.purpose == "holdout"
    assert f"{C.QUEUED:<8}|" == "queued  |" and str(R.DONE) == "done"
    with pytest.raises(ValueError):
        RunRequest(1, {"cpu": 1.0}, "bogus")
