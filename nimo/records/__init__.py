"""Records: the plain data every layer exchanges, below the planner, the store and runners.

Samples (``samples``), run requests, purposes, states and outcomes (``runs``), campaigns and
their stored runs (``campaigns``) and convergence-log lines (``iterations``). Records import
nothing of ``nimo`` but ``nimo.errors``.
"""

from nimo.records.campaigns import CampaignInfo, CampaignKind, CampaignStatus, StoredRun
from nimo.records.iterations import IterationRecord
from nimo.records.runs import (
    RunOutcome,
    RunPurpose,
    RunRequest,
    RunStatus,
    interrupted_reason,
)
from nimo.records.samples import TARGETS, Occupancies, Sample, occupancies

__all__ = [
    "TARGETS",
    "CampaignInfo",
    "CampaignKind",
    "CampaignStatus",
    "IterationRecord",
    "Occupancies",
    "RunOutcome",
    "RunPurpose",
    "RunRequest",
    "RunStatus",
    "Sample",
    "StoredRun",
    "interrupted_reason",
    "occupancies",
]
