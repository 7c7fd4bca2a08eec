"""``StoreContract``: the behaviour every ``Store`` must show (run against ``MemoryStore``
and SQLite by ``tests/unit/test_store_contract.py``, and against a SQLite file and PostgreSQL
by ``tests/integration/test_store_*.py``).

Each ``check_*`` method takes a fresh store and a unique campaign-name prefix and raises
``AssertionError`` on a violation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from nimo.errors import StoreError
from nimo.records import IterationRecord, RunOutcome, RunRequest, RunStatus, Sample
from nimo.store.base import Store
from nimo.store.objects import HostObject
from nimo.store.types import Owner

DESIGN = {"strategy": "nimo", "stop": {"error_pct": 10.0}}


def _raises(fn: Callable[[], object], *needles: str) -> StoreError:
    try:
        fn()
    except StoreError as e:
        for needle in needles:
            assert needle in str(e), f"{needle!r} not in {str(e)!r}"
        return e
    raise AssertionError("expected StoreError")


def _outcome(run: int, T: float, ok: bool = True) -> RunOutcome:
    a = {"cpu": float(run), "lat": 2.0}
    req = RunRequest(run, a, "train", "f_a")
    if not ok:
        return RunOutcome(req, RunStatus.FAILED, reason="ssh lost", host="h1")
    smp = Sample(a, T=T, D=10.0, U=0.5, o_a=T / 20, o_n=T / 30, o_d=T / 60, cost_s=T + 1,
                 profile={"cpu": float(run)}, meta={"sar": {"cpu_util": [0.5, 0.6]}})
    return RunOutcome(req, RunStatus.DONE, smp, overhead_s=1.0, host="h1",
                      started_at=100.0 + run, ended_at=200.0 + run)


class StoreContract:
    """Checks shared by every backend."""

    checks = (
        "campaign_roundtrip", "unknown_campaign", "duplicate_name", "campaign_lifecycle",
        "run_lifecycle", "no_duplicate_samples", "interrupted_runs", "reopened_runs",
        "iterations_upsert", "model_versions", "leases_atomic", "delete_campaign",
        "host_objects",
        "one_owner_per_campaign", "claims_race", "stale_owner_reaped", "leases_reentrant",
    )

    def run_all(self, make_store: Callable[[], Store], prefix: str) -> None:
        for check in self.checks:
            store = make_store()
            try:
                getattr(self, f"check_{check}")(store, f"{prefix}-{check}")
            finally:
                store.close()

    def check_campaign_roundtrip(self, store: Store, name: str) -> None:
        info = store.create_campaign(name, "replay", design=DESIGN, spec={"csv": "x.csv"}, seed=7)
        assert (info.name, info.kind, info.status, info.seed) == (name, "replay", "created", 7)
        got = store.campaign(name)
        assert got.design == DESIGN and got.spec == {"csv": "x.csv"}
        assert store.set_status(name, "running", expect=["created"])
        assert not store.set_status(name, "running", expect=["created"])
        assert store.campaign(name).status == "running"
        assert name in [c.name for c in store.campaigns(status="running")]
        assert store.update_spec(name, hosts=["a", "b"]).spec["hosts"] == ["a", "b"]
        _raises(lambda: store.create_campaign(name, "bogus", design={}), "unknown campaign kind")

    def check_unknown_campaign(self, store: Store, name: str) -> None:
        _raises(lambda: store.campaign(name + "-missing"), "no campaign named", "-missing")
        _raises(lambda: store.runs(name + "-missing"), "no campaign named")

    def check_duplicate_name(self, store: Store, name: str) -> None:
        store.create_campaign(name, "live", design=DESIGN)
        _raises(lambda: store.create_campaign(name, "live", design=DESIGN), "already exists")

    def check_campaign_lifecycle(self, store: Store, name: str) -> None:
        store.create_campaign(name, "replay", design=DESIGN)
        _raises(lambda: store.set_status(name, "done"), "is created", "cannot become done")
        for status in ("running", "done", "holdout", "done", "running", "interrupted"):
            assert store.set_status(name, status, stopped_because=f"now {status}")
        info = store.campaign(name)
        assert (info.status, info.stopped_because) == ("interrupted", "now interrupted")
        _raises(lambda: store.set_status(name, "starting"), "cannot become starting")
        assert store.set_status(name, "queued") and store.set_status(name, "starting")
        assert store.campaign(name).status == "starting"

    def check_run_lifecycle(self, store: Store, name: str) -> None:
        store.create_campaign(name, "live", design=DESIGN)
        o = _outcome(1, 50.0)
        store.queue_runs(name, [o.request])
        assert store.runs(name)[0].status is RunStatus.QUEUED
        _raises(lambda: store.record_outcome(name, RunOutcome(o.request, RunStatus.QUEUED)),
                "not finished")
        store.record_outcome(name, o)
        run = store.runs(name)[0]
        assert run.status is RunStatus.DONE and run.host == "h1" and run.started_at == 101.0
        assert run.purpose == "train" and run.attempts == 1
        assert run.sample is not None and run.sample.meta == {"sar": {"cpu_util": [0.5, 0.6]}}
        assert run.sample.T == 50.0 and run.sample.o_a == 2.5 and run.sample.cost_s == 51.0
        _raises(lambda: store.record_outcome(name, _outcome(1, 0.0, ok=False)),
                "run 1 is already done", "cannot become failed")
        bad = _outcome(2, 0.0, ok=False)
        store.record_outcome(name, bad)
        failed = store.runs(name)[1]
        assert failed.status is RunStatus.FAILED and failed.reason == "ssh lost"
        assert failed.sample is None
        assert sorted(store.outcomes(name)) == [1, 2]

    def check_no_duplicate_samples(self, store: Store, name: str) -> None:
        store.create_campaign(name, "replay", design=DESIGN)
        store.record_outcome(name, _outcome(1, 10.0))
        _raises(lambda: store.record_outcome(name, _outcome(1, 11.0)), "already done")
        assert [(r, s.T) for r, s in store.samples(name)] == [(1, 10.0)]
        store.queue_runs(name, [_outcome(1, 10.0).request])  # a finished run stays finished
        assert store.runs(name)[0].status is RunStatus.DONE

    def check_interrupted_runs(self, store: Store, name: str) -> None:
        store.create_campaign(name, "live", design=DESIGN)
        store.record_outcome(name, _outcome(1, 10.0))
        store.queue_runs(name, [_outcome(2, 0).request, _outcome(3, 0).request])
        hit = store.interrupt_in_flight(name)
        assert [r.run for r in hit] == [2, 3] and all(r.interrupted for r in hit)
        assert [(r.status, r.reason) for r in hit] == [(RunStatus.INTERRUPTED, "interrupted")] * 2
        assert sorted(store.outcomes(name)) == [1]  # interrupted runs are run again
        store.queue_runs(name, [_outcome(2, 0).request])
        again = store.runs(name)[1]
        assert again.status is RunStatus.QUEUED and again.attempts == 2
        store.record_outcome(name, _outcome(2, 20.0))
        store.record_outcome(name, _outcome(3, 30.0))  # straight from interrupted to done
        assert [(r, s.T) for r, s in store.samples(name)] == [(1, 10.0), (2, 20.0), (3, 30.0)]

    def check_reopened_runs(self, store: Store, name: str) -> None:
        store.create_campaign(name, "live", design=DESIGN)
        store.record_outcome(name, _outcome(1, 10.0))
        store.record_outcome(name, _outcome(2, 0.0, ok=False))
        store.reopen_runs(name, [1, 2])  # a done run stays done
        done, reopened = store.runs(name)
        assert done.status is RunStatus.DONE
        assert reopened.status is RunStatus.INTERRUPTED
        assert reopened.reason == "interrupted (ssh lost)"
        assert sorted(store.outcomes(name)) == [1]
        store.queue_runs(name, [_outcome(2, 0).request])
        assert store.runs(name)[1].attempts == 2
        store.record_outcome(name, _outcome(2, 20.0))
        assert [(r, s.T) for r, s in store.samples(name)] == [(1, 10.0), (2, 20.0)]

    def check_iterations_upsert(self, store: Store, name: str) -> None:
        store.create_campaign(name, "replay", design=DESIGN)
        rec = IterationRecord(run=1, assignment={"cpu": 1.0}, purpose="train", predictor="f_a",
                              attributes={"f_a": ("cpu",)}, acquisition_s=60.0,
                              internal_error_pct=12.5, external_mape_pct=20.0)
        store.record_iteration(name, rec)
        store.record_iteration(name, rec)
        got = store.iterations(name)
        assert len(got) == 1 and got[0] == rec

    def check_model_versions(self, store: Store, name: str) -> None:
        store.create_campaign(name, "replay", design=DESIGN)
        _raises(lambda: store.model(name), "no model yet")
        assert store.save_model(name, 3, {"format": "m", "k": [1.0]}) == 1
        assert store.save_model(name, 5, {"format": "m", "k": [2.0]}) == 2
        assert store.save_model(name, 3, {"format": "m", "k": [1.0]}) == 1  # idempotent
        assert store.model(name).model == {"format": "m", "k": [2.0]}
        assert store.model(name, 1).run == 3
        _raises(lambda: store.model(name, 9), "no model version 9")

    def check_leases_atomic(self, store: Store, name: str) -> None:
        a, b = f"{name}-a", f"{name}-b"
        h = [f"{name}-h{i}" for i in range(3)]
        assert store.acquire_hosts(a, h[:2], owner="svc")
        assert not store.acquire_hosts(b, h[1:], owner="svc")  # h1 is taken: nothing leased
        assert {lease.host for lease in store.leases() if lease.campaign == b} == set()
        results: list[bool] = []
        threads = [
            threading.Thread(target=lambda i=i: results.append(
                store.acquire_hosts(b, h[2:], f"svc{i}")))  # re-entrant for one owner only
            for i in range(4)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert sorted(results) == [False, False, False, True]
        assert sorted(store.release_hosts(a)) == h[:2]
        assert store.acquire_hosts(f"{name}-c", h[:2], owner="svc")
        log = [lg for lg in store.lease_log() if lg.host == h[0]]
        assert [lg.campaign for lg in log] == [a, f"{name}-c"] and log[0].released_at is not None

    def check_delete_campaign(self, store: Store, name: str) -> None:
        other = f"{name}-kept"
        for n in (name, other):
            store.create_campaign(n, "replay", design=DESIGN)
            store.queue_runs(n, [_outcome(1, 5.0).request, _outcome(2, 6.0).request])
            store.record_outcome(n, _outcome(1, 5.0))
            store.record_iteration(n, IterationRecord(1, {"cpu": 1.0}, "train", "f_a", {},
                                                      5.0, None))
            store.save_model(n, 1, {"v": 1})
        assert store.acquire_hosts(name, [f"{name}-h1"], "me")
        assert store.delete_campaign(name) == 2
        _raises(lambda: store.campaign(name), name)
        assert name not in [c.name for c in store.campaigns()]
        assert all(lease.campaign != name for lease in store.leases())
        assert len(store.runs(other)) == 2 and len(store.samples(other)) == 1
        assert len(store.models(other)) == 1 and len(store.iterations(other)) == 1
        _raises(lambda: store.delete_campaign(name), name)
        store.create_campaign(name, "replay", design=DESIGN)  # the name is free again
        assert store.runs(name) == [] and store.models(name) == []

    # -- host objects (nimo.store.objects) -------------------------------------------
    def check_host_objects(self, store: Store, name: str) -> None:
        other = f"{name}-other"
        made = [HostObject(name, "c1-r1-0-ab", "h1", "dir", "/tmp/nimo-c1-r1-0-ab-mon-x.h1"),
                HostObject(name, "c1-r1-0-ab", "h2", "qdisc", "data0"),
                HostObject(name, "c1-r2-0-cd", "h1", "rule", "nimo-c1-r2-0-cd.h1"),
                HostObject(other, "c2-r1-0-ef", "h1", "cgroup", "/sys/fs/cgroup/cpu/x")]
        for obj in made:
            store.record_host_object(obj)
        got = store.host_objects(name)
        assert [(o.run_id, o.host, o.kind, o.ident) for o in got] == [
            (o.run_id, o.host, o.kind, o.ident) for o in made[:3]]
        assert all(o.created_at > 0 for o in got)
        assert [o.kind for o in store.host_objects(name, host="h1")] == ["dir", "rule"]
        assert store.forget_host_objects(name, run_id="c1-r1-0-ab") == 2
        assert [o.kind for o in store.host_objects(name)] == ["rule"]
        assert store.forget_host_objects(name, host="h2") == 0
        assert store.forget_host_objects(name) == 1 and store.host_objects(name) == []
        assert [o.kind for o in store.host_objects(other)] == ["cgroup"]  # untouched
    def check_one_owner_per_campaign(self, store: Store, name: str) -> None:
        a, b = (store.register_owner(Owner(f"{name}-{x}", f"m{x}", 7)) for x in "ab")
        assert a.heartbeat_at > 0 and a.since > 0
        assert store.claim_campaign(name, a.id, stale_s=60) is None
        assert store.claim_campaign(name, a.id, stale_s=60) is None  # re-entrant
        holder = store.claim_campaign(name, b.id, stale_s=60)
        assert holder is not None and (holder.id, holder.host, holder.pid) == (a.id, "ma", 7)
        assert "host ma pid 7 since" in holder.describe()
        got = store.campaign_owner(name)
        assert got is not None and got.id == a.id
        assert store.heartbeat(a.id)
        store.release_campaign(name, b.id)  # not b's: nothing happens
        assert store.claim_campaign(name, b.id, stale_s=60) is not None
        store.release_campaign(name, a.id)
        assert store.campaign_owner(name) is None
        assert store.claim_campaign(name, b.id, stale_s=60) is None
        assert store.acquire_hosts(name, [f"{name}-h"], b.id, stale_s=60)
        store.drop_owner(b.id)
        assert store.campaign_owner(name) is None and not store.heartbeat(b.id)
        assert all(lease.owner != b.id for lease in store.leases())
        assert all(lg.released_at for lg in store.lease_log() if lg.owner == b.id)

    def check_claims_race(self, store: Store, name: str) -> None:
        owners = [store.register_owner(Owner(f"{name}-{i}", "m", i)) for i in range(6)]
        results: dict[str, Owner | None] = {}
        threads = [threading.Thread(target=lambda o=o: results.__setitem__(
            o.id, store.claim_campaign(name, o.id, stale_s=60))) for o in owners]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        winners = [oid for oid, holder in results.items() if holder is None]
        assert len(results) == 6 and len(winners) == 1, results
        assert {h.id for h in results.values() if h is not None} == set(winners)

    def check_stale_owner_reaped(self, store: Store, name: str) -> None:
        dead = store.register_owner(Owner(f"{name}-dead", "ma", 1))
        live = store.register_owner(Owner(f"{name}-live", "mb", 2))
        assert store.claim_campaign(name, dead.id, stale_s=60) is None
        assert store.acquire_hosts(name, [f"{name}-h1"], dead.id)
        time.sleep(0.3)
        assert store.heartbeat(live.id)
        assert store.claim_campaign(name, live.id, stale_s=60) is not None  # still fresh
        assert not store.acquire_hosts(f"{name}-x", [f"{name}-h1"], live.id, stale_s=60)
        assert store.claim_campaign(name, live.id, stale_s=0.2) is None  # dead is stale
        assert not store.heartbeat(dead.id)  # the stale process learns it lost everything
        assert store.leases() == [] or all(lease.owner != dead.id for lease in store.leases())
        assert store.acquire_hosts(f"{name}-x", [f"{name}-h1"], live.id, stale_s=0.2)
        log = [lg for lg in store.lease_log() if lg.host == f"{name}-h1"]
        assert [lg.owner for lg in log] == [dead.id, live.id]
        assert log[0].released_at is not None and log[0].released_at <= log[1].acquired_at
        assert not store.acquire_hosts(f"{name}-y", [f"{name}-h1"], "unregistered")
        assert store.acquire_hosts(f"{name}-y", [f"{name}-h2"], "legacy-owner")
        assert store.acquire_hosts(f"{name}-z", [f"{name}-h2"], live.id, stale_s=60)

    def check_leases_reentrant(self, store: Store, name: str) -> None:
        h = [f"{name}-h{i}" for i in range(3)]
        assert store.acquire_hosts(name, h[:2], "me")
        assert store.acquire_hosts(name, h, "me")  # h0, h1 already its own: takes h2
        assert not store.acquire_hosts(name, h, "other")
        assert [lg.host for lg in store.lease_log() if lg.campaign == name] == [h[0], h[1], h[2]]
        assert sorted(store.release_hosts(name, "me")) == h
        assert [lease.host for lease in store.lease_holders(h)] == []


def check_schema_versions(url: str, open_store: Callable[[str], Store]) -> None:
    """On an empty database at ``url``: a new store records the current schema version; a
    store from before versions (no ``nimo_schema``) is upgraded on open with its campaigns
    intact; a store of a newer version is refused with one line and left unchanged."""
    from sqlalchemy import text

    from nimo.store.schema import SCHEMA_TABLE, SCHEMA_VERSION, set_version

    store = open_store(url)
    engine = store.engine  # type: ignore[attr-defined]
    assert store.schema_found == SCHEMA_VERSION  # type: ignore[attr-defined]
    store.create_campaign("old", "replay", design=DESIGN, seed=3)
    store.record_outcome("old", _outcome(1, 5.0))
    with engine.begin() as conn:  # make it a version-1 store
        conn.execute(text(f"DROP TABLE {SCHEMA_TABLE}"))
    store.close()

    upgraded = open_store(url)
    assert upgraded.schema_found == 1  # type: ignore[attr-defined]
    assert upgraded.campaign("old").seed == 3 and len(upgraded.samples("old")) == 1
    upgraded.close()
    again = open_store(url)
    assert again.schema_found == SCHEMA_VERSION  # type: ignore[attr-defined]
    set_version(again.engine, SCHEMA_VERSION + 1)  # type: ignore[attr-defined]
    again.close()

    e = _raises(lambda: open_store(url), f"schema version {SCHEMA_VERSION + 1}",
                f"newer than this nimo's {SCHEMA_VERSION}")
    assert "\n" not in str(e)
