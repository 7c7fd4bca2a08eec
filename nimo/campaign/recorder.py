"""``StoreRecorder``: the observer that keeps a campaign in the store as it goes."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from nimo.campaign.loop import CampaignResult, Observer
from nimo.errors import NimoError, interrupt_reason, one_line
from nimo.records import CampaignStatus, IterationRecord, RunOutcome, RunRequest
from nimo.store.base import Store


class StoreRecorder(Observer):
    """Records a campaign in the store as it goes: each finished run and its sample are
    committed before the next experiment starts; convergence log and model versions follow.
    The campaign is marked running when the recorder first writes, and done, failed or
    interrupted when the loop ends."""

    def __init__(self, store: Store, name: str) -> None:
        self.store = store
        self.name = name
        self._running = False

    def _start(self) -> None:
        if not self._running:
            self.store.set_status(self.name, CampaignStatus.RUNNING)
            self._running = True

    def asked(self, requests: Sequence[RunRequest]) -> None:
        self._start()
        self.store.queue_runs(self.name, requests)

    def outcome(self, outcome: RunOutcome) -> None:
        self.store.record_outcome(self.name, outcome)

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        self.store.record_iteration(self.name, record)
        if model is not None:
            self.store.save_model(self.name, record.run, model.to_dict())

    def finished(self, result: CampaignResult) -> None:
        self._start()
        if result.failed_streak:  # a broken workbench: resume runs these again once fixed
            self.store.reopen_runs(self.name, result.failed_streak)
            self.store.set_status(self.name, CampaignStatus.FAILED,
                                  stopped_because=result.stopped_because)
            return
        self.store.set_status(self.name, CampaignStatus.DONE,
                              stopped_because=result.stopped_because or "")

    def aborted(self, error: BaseException) -> None:
        """Marked interrupted; on Ctrl-C (or a signal handled alike) whose teardown ended,
        the runs in flight too (a second interrupt sets ``hosts_dirty`` on the error: they
        stay in flight, so a resume cleans their hosts first)."""
        with contextlib.suppress(NimoError):
            reason = (interrupt_reason(error) if isinstance(error, KeyboardInterrupt)
                      else one_line(error, with_type=True))
            self._start()
            self.store.set_status(self.name, CampaignStatus.INTERRUPTED, stopped_because=reason)
            if isinstance(error, KeyboardInterrupt) and not getattr(error, "hosts_dirty", False):
                self.store.interrupt_in_flight(self.name)
