"""Small fakes of the Runner and Planner contracts, shared by the campaign and service tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from nimo.errors import ModelError
from nimo.planner.base import Planner
from nimo.records import IterationRecord, RunOutcome, RunRequest, RunStatus, Sample
from nimo.runner import RunnerBase
from nimo.space import Attribute, ResourceSpace

SPACE = ResourceSpace((Attribute("cpu", (1.0, 2.0, 3.0, 4.0)), Attribute("lat", (0.0, 5.0, 10.0))))


def true_T(a) -> float:
    return 100.0 / a["cpu"] + 3.0 * a["lat"]


class FakeRunner(RunnerBase):
    """T from a formula; runs listed in ``fail`` fail; counts what it really ran."""

    def __init__(self, fail: Sequence[int] = (), crash_at: int | None = None) -> None:
        self.ran: list[int] = []
        self.fail = set(fail)
        self.crash_at = crash_at

    @property
    def space(self) -> ResourceSpace:
        return SPACE

    def spec(self) -> dict:
        return {"fail": sorted(self.fail), "crash_at": self.crash_at}

    def run(self, request: RunRequest) -> RunOutcome:
        if request.run == self.crash_at:
            raise KeyboardInterrupt
        self.ran.append(request.run)
        if request.run in self.fail:
            return RunOutcome(request, RunStatus.FAILED, reason="host vanished")
        T = true_T(request.assignment)
        return RunOutcome(request, RunStatus.DONE, Sample(dict(request.assignment), T=T))


class FormulaRunner(RunnerBase):
    """A run's outcome from ``outcome(assignment)``: a Sample (done) or a failure reason."""

    def __init__(self, space: ResourceSpace,
                 outcome: Callable[[Mapping[str, float]], Sample | str],
                 kind: str = "direct") -> None:
        self._space, self._outcome, self._kind = space, outcome, kind

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def space(self) -> ResourceSpace:
        return self._space

    def spec(self) -> dict:
        return {}

    def run(self, request: RunRequest) -> RunOutcome:
        got = self._outcome(request.assignment)
        if isinstance(got, str):
            return RunOutcome(request, RunStatus.FAILED, reason=got)
        return RunOutcome(request, RunStatus.DONE, got)


class LineModel:
    """T ~ b0 + b1/cpu + b2*lat, least squares over the samples told so far."""

    names = ("cpu", "lat")

    def __init__(self, samples: list[Sample]) -> None:
        X = np.array([[1.0, 1.0 / s.assignment["cpu"], s.assignment["lat"]] for s in samples])
        y = np.array([s.T for s in samples])
        self.beta = np.linalg.lstsq(X, y, rcond=None)[0]

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(X)
        return self.beta[0] + self.beta[1] / X[:, 0] + self.beta[2] * X[:, 1]

    def to_dict(self) -> dict:
        return {"beta": [float(b) for b in self.beta]}


class FakePlanner(Planner):
    """Seeded random order of candidates, in batches of two, stopping after ``budget`` runs.
    Its next requests depend on the told outcomes (a failed run is followed by its retry on
    another assignment), so a resume that told it the wrong things would diverge."""

    def __init__(self, seed: int, budget: int = 8) -> None:
        self.order = list(np.random.default_rng(seed).permutation(len(SPACE.candidates)))
        self.budget = budget
        self.next_run = 1
        self.samples: list[Sample] = []
        self.acq = 0.0
        self.told: list[int] = []

    def ask(self) -> list[RunRequest]:
        if len(self.samples) >= self.budget or not self.order:
            self.stopped_because = "budget" if self.order else "exhausted"
            return []
        batch = []
        for _ in range(min(2, len(self.order))):
            a = SPACE.as_dict(SPACE.candidates[self.order.pop(0)])
            batch.append(RunRequest(self.next_run, a, "train", "f_a"))
            self.next_run += 1
        return batch

    def tell(self, outcome: RunOutcome) -> IterationRecord:
        self.told.append(outcome.request.run)
        if outcome.ok:
            self.samples.append(outcome.sample)
            self.acq += outcome.sample.T
        err = None
        if len(self.samples) >= 4:
            m = LineModel(self.samples[:-1])
            last = self.samples[-1]
            err = abs(m.predict_many([[last.assignment["cpu"], last.assignment["lat"]]])[0]
                      - last.T) / last.T * 100
        return IterationRecord(
            run=outcome.request.run, assignment=outcome.request.assignment, purpose="train",
            predictor="f_a", attributes={"f_a": ("cpu",)}, acquisition_s=self.acq,
            internal_error_pct=err, status=outcome.status.value, reason=outcome.reason,
        )

    def model(self) -> LineModel:
        if len(self.samples) < 3:
            raise ModelError("not enough samples")
        return LineModel(self.samples)


EXTERNAL = [(SPACE.as_dict(c), true_T(SPACE.as_dict(c))) for c in SPACE.candidates[::3]]


class HostRunner(FakeRunner):
    """A FakeRunner that occupies named hosts while it runs and records any host found busy
    with another campaign (``HostBoard.clashes``). ``flaky`` runs fail on their first try."""

    def __init__(self, campaign: str, hosts: Sequence[str], board: HostBoard,
                 delay_s: float = 0.01, flaky: Sequence[int] = ()) -> None:
        super().__init__()
        self.campaign = campaign
        self.host_names = tuple(hosts)
        self.board = board
        self.delay_s = delay_s
        self.flaky = set(flaky)

    @property
    def hosts(self) -> tuple[str, ...]:
        return self.host_names

    def run(self, request: RunRequest) -> RunOutcome:
        self.board.enter(self.campaign, self.hosts)
        try:
            time.sleep(self.delay_s)
            if request.run in self.flaky:
                self.flaky.discard(request.run)
                self.ran.append(request.run)
                return RunOutcome(request, RunStatus.FAILED, reason="flaky")
            return super().run(request)
        finally:
            self.board.leave(self.campaign, self.hosts)


class HostBoard:
    """Who is on which host right now, and every overlap seen."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.busy: dict[str, str] = {}
        self.clashes: list[tuple[str, str, str]] = []
        self.seen: set[str] = set()

    def enter(self, campaign: str, hosts: Sequence[str]) -> None:
        with self.lock:
            self.seen.add(campaign)
            for h in hosts:
                other = self.busy.get(h)
                if other is not None and other != campaign:
                    self.clashes.append((h, other, campaign))
                self.busy[h] = campaign

    def leave(self, campaign: str, hosts: Sequence[str]) -> None:
        with self.lock:
            for h in hosts:
                if self.busy.get(h) == campaign:
                    del self.busy[h]
