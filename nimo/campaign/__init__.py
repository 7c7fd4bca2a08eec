"""Campaigns: the ask/run/tell loop and what surrounds it.

* ``loop``: ``Campaign``, its ``Observer`` hooks and ``CampaignResult``;
* ``runners``: runner wrappers that compose (``ResumingRunner``, ``RetryingRunner``);
* ``metrics``: a model's MAPE and interval coverage on measured cases;
* ``recorder``: ``StoreRecorder``, which keeps a campaign in a store as it goes;
* ``holdout``: runs after learning, and the model's calibration on unseen runs;
* ``lifecycle``: creating, running or resuming, and finishing a campaign in a store.

The progress display is the command line's (``workbench.cli.progress``).
"""

from nimo.campaign.holdout import OutcomeLog, run_holdout, with_calibrated_model
from nimo.campaign.lifecycle import (
    build_planner,
    design_to_dict,
    execute,
    new_campaign,
    with_batch,
)
from nimo.campaign.loop import Campaign, CampaignResult, Observer, current_model
from nimo.campaign.metrics import External, interval_coverage, mape_pct
from nimo.campaign.recorder import StoreRecorder
from nimo.campaign.runners import ResumingRunner, RetryingRunner

__all__ = [
    "Campaign",
    "CampaignResult",
    "External",
    "Observer",
    "OutcomeLog",
    "ResumingRunner",
    "RetryingRunner",
    "StoreRecorder",
    "build_planner",
    "current_model",
    "design_to_dict",
    "execute",
    "interval_coverage",
    "mape_pct",
    "new_campaign",
    "run_holdout",
    "with_batch",
    "with_calibrated_model",
]
