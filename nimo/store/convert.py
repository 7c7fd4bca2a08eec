"""Records to rows and back: the one place the SQL tables' layout is mapped to records.

The tables mirror the records field for field, except that an assignment is its own row
(shared by the runs on it), a sample's assignment is its run's, and an interrupted run is
stored as it always was (``RunStatus.stored``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nimo.records import (
    CampaignInfo,
    CampaignKind,
    CampaignStatus,
    IterationRecord,
    RunOutcome,
    RunPurpose,
    RunStatus,
    Sample,
    StoredRun,
)
from nimo.store import tables as t
from nimo.store.types import Lease, ModelVersion

_RECORD_FIELDS = (
    "run", "assignment", "purpose", "predictor", "attributes", "acquisition_s",
    "internal_error_pct", "external_mape_pct", "status", "reason",
)


def jsonable(value: Any) -> Any:
    """Plain JSON types (tuples -> lists, numpy scalars -> floats, enums -> values)."""
    return json.loads(json.dumps(value, default=_default))


def _default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    if hasattr(o, "value"):
        return o.value
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def assignment_key(assignment: Mapping[str, float]) -> str:
    """The text that identifies an assignment within a campaign (sorted, floats)."""
    return json.dumps({k: float(v) for k, v in sorted(assignment.items())}, sort_keys=True)


def assignment_values(assignment: Mapping[str, float]) -> dict[str, float]:
    return {k: float(v) for k, v in assignment.items()}


def campaign_info(r: t.CampaignRow) -> CampaignInfo:
    return CampaignInfo(
        name=r.name, kind=CampaignKind(r.kind), status=CampaignStatus(r.status),
        design=dict(r.design or {}), spec=dict(r.spec or {}), seed=r.seed,
        stopped_because=r.stopped_because, created_at=r.created_at, updated_at=r.updated_at,
    )


def set_run_state(row: t.RunRow, status: RunStatus, reason: str | None) -> None:
    row.status, row.reason = status.stored, reason


def run_state(row: t.RunRow) -> RunStatus:
    return RunStatus.from_stored(row.status, row.reason)


def fill_run_row(row: t.RunRow, outcome: RunOutcome) -> None:
    """Copy a finished outcome's request and result into its run row."""
    req = outcome.request
    row.purpose, row.predictor = req.purpose, req.predictor
    set_run_state(row, outcome.status, outcome.reason)
    row.host, row.overhead_s = outcome.host, float(outcome.overhead_s)
    row.started_at, row.ended_at = outcome.started_at, outcome.ended_at


def sample_row(cid: int, run: int, run_id: int | None, smp: Sample) -> t.SampleRow:
    assert run_id is not None
    d = jsonable(smp.to_dict())
    return t.SampleRow(
        campaign_id=cid, run=run, run_id=run_id, T=d["T"], D=d["D"], U=d["U"],
        o_a=d["o_a"], o_n=d["o_n"], o_d=d["o_d"], cost_s=d["cost_s"],
        profile=d["profile"], meta=d["meta"],
    )


def stored_run(r: t.RunRow, a: t.AssignmentRow, smp: t.SampleRow | None) -> StoredRun:
    assignment = assignment_values(a.values)
    sample = None
    if smp is not None:
        sample = Sample(
            assignment=dict(assignment), T=smp.T, D=smp.D, U=smp.U, o_a=smp.o_a, o_n=smp.o_n,
            o_d=smp.o_d, cost_s=smp.cost_s, profile=dict(smp.profile or {}),
            meta=dict(smp.meta or {}),
        )
    return StoredRun(
        run=r.run, assignment=assignment, purpose=RunPurpose(r.purpose), predictor=r.predictor,
        status=run_state(r), reason=r.reason, attempts=r.attempts, host=r.host,
        started_at=r.started_at, ended_at=r.ended_at, overhead_s=r.overhead_s, sample=sample,
    )


def fill_iteration_row(row: t.IterationRow, record: IterationRecord) -> None:
    row.acquisition_s = float(record.acquisition_s)
    row.internal_error_pct = record.internal_error_pct
    row.external_mape_pct = record.external_mape_pct
    row.record = jsonable(record.to_dict())


def iteration(d: Mapping[str, Any]) -> IterationRecord:
    """An iteration record from its stored ``to_dict()`` form."""
    return IterationRecord(
        run=int(d["run"]),
        assignment=dict(d.get("assignment") or {}),
        purpose=d.get("purpose", ""),
        predictor=d.get("predictor"),
        attributes={k: tuple(v) for k, v in (d.get("attributes") or {}).items()},
        acquisition_s=float(d.get("acquisition_s") or 0.0),
        internal_error_pct=d.get("internal_error_pct"),
        status=d.get("status") or "done",
        reason=d.get("reason"),
        external_mape_pct=d.get("external_mape_pct"),
        extra={k: v for k, v in d.items() if k not in _RECORD_FIELDS},
    )


def model_version(r: t.ModelRow) -> ModelVersion:
    return ModelVersion(r.version, r.run, r.model, r.created_at)


def lease(r: t.LeaseRow | t.LeaseLogRow) -> Lease:
    released = r.released_at if isinstance(r, t.LeaseLogRow) else None
    return Lease(r.host, r.campaign, r.owner, r.acquired_at, released)
