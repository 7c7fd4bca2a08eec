"""Records: the plain data every layer exchanges, below the planner, the store and runners.

Samples (``samples``), run requests, states and outcomes (``runs``) and convergence-log lines
(``iterations``). Records import nothing of ``nimo`` but ``nimo.errors``.
"""

from nimo.records.iterations import IterationRecord
from nimo.records.runs import PURPOSES, RunOutcome, RunRequest, RunStatus
from nimo.records.samples import TARGETS, Occupancies, Sample, occupancies

__all__ = [
    "PURPOSES",
    "TARGETS",
    "IterationRecord",
    "Occupancies",
    "RunOutcome",
    "RunRequest",
    "RunStatus",
    "Sample",
    "occupancies",
]
