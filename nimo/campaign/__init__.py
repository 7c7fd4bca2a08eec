"""Campaigns: the ask/run/tell loop and what surrounds it.

* ``loop``: ``Campaign``, its ``Observer`` hooks and ``CampaignResult``;
* ``runners``: runner wrappers that compose (``ResumingRunner``, ``RetryingRunner``);
* ``metrics``: a model's MAPE and interval coverage on measured cases;
* ``recorder``: ``StoreRecorder``, which keeps a campaign in a store as it goes;
* ``holdout``: runs after learning, and the model's calibration on unseen runs;
* ``lifecycle``: creating, running or resuming, and finishing a campaign in a store.

The progress display is the command line's (``workbench.cli.progress``).

The names below load on first use (PEP 562), so a command that needs only ``metrics`` (``nimo
predict``) does not import the planner and the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nimo.lazy import lazy_attributes

if TYPE_CHECKING:
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

_MODULE_OF = {
    **dict.fromkeys(("OutcomeLog", "run_holdout", "with_calibrated_model"),
                    "nimo.campaign.holdout"),
    **dict.fromkeys(("build_planner", "design_to_dict", "execute", "new_campaign",
                     "with_batch"), "nimo.campaign.lifecycle"),
    **dict.fromkeys(("Campaign", "CampaignResult", "Observer", "current_model"),
                    "nimo.campaign.loop"),
    **dict.fromkeys(("External", "interval_coverage", "mape_pct"), "nimo.campaign.metrics"),
    "StoreRecorder": "nimo.campaign.recorder",
    **dict.fromkeys(("ResumingRunner", "RetryingRunner"), "nimo.campaign.runners"),
}

__getattr__ = lazy_attributes(__name__, _MODULE_OF)

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
