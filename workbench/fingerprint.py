"""What a live campaign's samples mean, as hashes stored with the campaign (spec key
``meaning``): the application (name, command, threads, repeats), its dataset (path, size,
generator) and the knobs (name, kind, unit, levels) and explicit assignments. A resume
compares them with the inventory as it is now and refuses, naming what changed, when the
runs it would add are not comparable with those stored.

A campaign stored by an older nimo has no hashes: resume warns once and records them.

A replay campaign's dataset spec holds the SHA-256 of its CSV (``sha256``); a resume refuses
a CSV whose bytes changed. One stored without it resumes unchecked (a submitted one that never
started records it at its first start).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from typing import Any

from nimo.errors import DataError
from nimo.records import CampaignInfo, CampaignKind
from nimo.store import Store
from workbench.csvfile import file_sha256
from workbench.errors import InventoryError
from workbench.inventory.model import Inventory

SPEC_KEY = "meaning"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def meaning(inv: Inventory) -> dict[str, str]:
    """``{part: hash}`` for the parts of ``inv`` that define a sample."""
    app = inv.application
    return {
        "application": _digest([app.name, list(app.command), app.threads, app.repeats]),
        "dataset": _digest(dataclasses.asdict(app.dataset)),
        "knobs": _digest([[k.name, k.kind, k.unit, list(k.levels),
                           *([list(k.categories)] if k.categories else [])] for k in inv.knobs]
                         + [list(a) for a in inv.assignments]),
    }


def meaning_of_file(path: str) -> dict[str, str]:
    from workbench.inventory import load_inventory

    return meaning(load_inventory(path))


def check_unchanged(store: Store, info: CampaignInfo) -> None:
    """Refuse (``InventoryError``, one line) to resume a live campaign whose inventory now
    gives its samples another meaning; record the hashes of an older campaign (warning).
    A replay campaign: ``check_replay_unchanged``."""
    if info.kind == CampaignKind.REPLAY:
        check_replay_unchanged(store, info)
    if info.kind != CampaignKind.LIVE:
        return
    path = info.spec["inventory"]
    now = meaning_of_file(path)
    stored = info.spec.get(SPEC_KEY)
    if not isinstance(stored, dict):
        print(f"nimo: warning: campaign {info.name!r} was stored without inventory hashes "
              f"(older nimo): cannot check that {path} still means the same; recording them "
              "now", file=sys.stderr)
        store.update_spec(info.name, **{SPEC_KEY: now})
        return
    changed = [part for part in sorted(now) if stored.get(part) not in (None, now[part])]
    if changed:
        raise InventoryError(
            f"{path}: the {' and '.join(changed)} changed since campaign {info.name!r} "
            "started; its samples would not be comparable",
            hint=f"restore the inventory, or start a new campaign from it: "
                 f"nimo campaign resume {info.name} --new NEW_NAME")


def check_replay_unchanged(store: Store, info: CampaignInfo) -> None:
    """Refuse (``DataError``, one line) to resume a replay campaign whose CSV's bytes changed
    since it started; a submitted campaign that never started records them now."""
    dataset = info.spec.get("dataset")
    if not isinstance(dataset, dict) or not dataset.get("path"):
        return
    path, stored = str(dataset["path"]), dataset.get("sha256")
    if stored is None:
        if "external" not in info.spec:  # queued, never started: no sample stored yet
            store.update_spec(info.name, dataset={**dataset, "sha256": file_sha256(path)})
        return  # stored by an older nimo: resumed unchecked, as before
    now = file_sha256(path)
    if now != stored:
        raise DataError(
            f"{path}: changed since campaign {info.name!r} started (content SHA-256 "
            f"{now[:12]}..., was {stored[:12]}...); its samples would not be comparable",
            hint=f"restore the CSV, or replay it as a new campaign: nimo replay {path} "
                 "--name NEW_NAME")
