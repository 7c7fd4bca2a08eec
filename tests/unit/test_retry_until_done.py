"""workbench.retry.until_done: the one retry loop of cgroup removal, G's kill and app-dir
removal."""

from __future__ import annotations

import threading

from workbench.retry import until_done


class Flaky:
    """Fails the first ``failures`` calls, then succeeds."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise OSError(f"dropped {self.calls}")


def test_succeeds_after_dropped_attempts_and_runs_the_repair_between() -> None:
    action, repairs = Flaky(2), []
    assert until_done(action, 3, pause_s=0, after_failure=lambda: repairs.append(1)) is None
    assert action.calls == 3 and len(repairs) == 2


def test_returns_the_last_error_when_every_attempt_fails() -> None:
    action = Flaky(10)
    error = until_done(action, 4, pause_s=0)
    assert isinstance(error, OSError) and str(error) == "dropped 4" and action.calls == 4


def test_a_stop_set_meanwhile_ends_quietly() -> None:
    action, stop = Flaky(10), threading.Event()
    stop.set()
    assert until_done(action, 5, pause_s=0.01, stop=stop) is None
    assert action.calls == 1


def test_a_stop_never_set_still_reports_the_error() -> None:
    action = Flaky(10)
    error = until_done(action, 2, pause_s=0.001, stop=threading.Event())
    assert isinstance(error, OSError) and action.calls == 2
