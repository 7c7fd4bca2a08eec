"""Wiring of campaigns: launch a replay or live one, resume one, write the JSON document.

The replay CLI (``nimo replay``), the campaign CLI (``nimo campaign run|resume``) and the
service (``nimo serve``) call these; they hold no argument parsing. The campaign's life in
the store is ``nimo.campaign.lifecycle``; runners are rebuilt by ``workbench.runners``.
Following a store URL through ``resume``: ``open_store`` -> ``Store.campaign`` ->
``open_runner_for`` (registry) -> ``Store.interrupt_in_flight`` -> ``lifecycle.execute``.

Stored campaign spec (``CampaignInfo.spec``), by kind:

* replay: ``dataset`` (the runner's spec: ``workbench.replay.ReplayOptions``), ``external``
  (``[[assignment, T], ...]``), ``all_samples_s``, optional ``hosts`` (labels the service
  leases);
* live: ``inventory`` (the runner's spec: path of the inventory YAML), ``holdout`` (N),
  ``hosts``; ``categories`` (``{knob: [names]}``, written when it first runs: a categorical
  knob's level k is ``names[k - 1]``, shown so by ``samples``, ``log`` and ``--json``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from nimo.campaign import CampaignResult, Observer, execute, new_campaign
from nimo.errors import ConfigError, FileAccessError, StoreError, one_line
from nimo.finite import finite_document
from nimo.records import (
    CampaignInfo,
    CampaignKind,
    CampaignStatus,
    IterationRecord,
    RunOutcome,
    RunStatus,
    StoredRun,
)
from nimo.records.campaigns import check_campaign_name
from nimo.runner import Runner, innermost
from nimo.store import Store, open_store
from nimo.store.urls import check_url, refuse_in_memory
from workbench.cli.progress import ProgressTable
from workbench.fingerprint import SPEC_KEY, check_unchanged, meaning_of_file
from workbench.ownership import Presence
from workbench.replay import ReplayRunner
from workbench.replay_categories import Categories, named_document
from workbench.runners import open_runner_for, runner_entry

RunnerFactory = Callable[[CampaignInfo], Runner]


def launch_replay(
    runner: ReplayRunner, *, design: Any, seed: int, store_url: str | None = None,
    name: str | None = None, json_out: str | Path | None = None, progress: bool = True,
    hosts: Sequence[str] = (),
) -> CampaignResult:
    """Run a replay campaign on ``runner`` and record it.

    ``design`` is a ``DesignSpec`` or design mapping (stored as JSON so resume can rebuild
    the planner); the runner's spec, external test set and all-samples time are stored so
    that ``nimo campaign resume NAME`` can rebuild the runner. With ``store_url`` and
    ``name`` both None nothing is stored; with a name and no URL the default store is used.
    Raises ``StoreError`` if ``name`` exists.
    """
    check_json_target(json_out)
    spec = {
        **runner_entry(CampaignKind.REPLAY).stored_spec(runner.spec()),
        "external": _pairs(runner.external),
        "calibration": _pairs(runner.calibration),
        "all_samples_s": runner.all_samples_s,
        "hosts": list(hosts),
    }
    return _launch(CampaignKind.REPLAY, runner, design, seed, spec, store_url, name, json_out,
                   progress)


def launch_live(
    inventory_path: str | Path, *, design: Any = None, seed: int = 0, holdout: int = 0,
    store_url: str | None = None, name: str | None = None, json_out: str | Path | None = None,
    progress: bool = True, doctor: bool = False,
) -> CampaignResult:
    """Run a live campaign on the inventory's hosts (``workbench.executor.SSHRunner``);
    with ``holdout`` N, then run N random unused assignments and report
    ``final.holdout_mape_pct`` and ``final.overhead_s_per_run``. With ``doctor``, the hosts
    are checked first (``workbench.doctor.preflight``): a blocker stops it before any run."""
    check_json_target(json_out)
    if store_url is not None:  # a bad URL is named now, not after the hosts' checks
        check_url(store_url)
        refuse_in_memory(store_url)
    if doctor:
        preflight(inventory_path)
    entry = runner_entry(CampaignKind.LIVE)
    runner = entry.build({"inventory": str(Path(inventory_path).resolve())})
    size = len(runner.space.candidates)
    if holdout >= size:  # the holdout runs assignments learning left unused
        runner.close()
        raise ConfigError(f"--holdout {holdout}: {inventory_path} has {size} assignments, "
                          "and learning uses some of them", hint=f"valid: fewer than {size}")
    spec = {**entry.stored_spec(runner.spec()), "holdout": int(holdout),
            "hosts": list(runner.hosts)}
    return _launch(CampaignKind.LIVE, runner, design, seed, spec, store_url, name, json_out,
                   progress)


def resume(
    name: str, *, store_url: str | None = None, json_out: str | Path | None = None,
    progress: bool = True, runner_factory: RunnerFactory | None = None, doctor: bool = False,
    presence: Presence | None = None,
) -> CampaignResult:
    """Continue a stopped or crashed campaign exactly where it was (no finished run repeated).

    The campaign is claimed (one owner anywhere; ``Busy`` naming a live one) and its hosts
    leased (``Busy`` naming the holder) before anything else; a live campaign whose inventory
    changed what a sample means is refused (``workbench.fingerprint``). The run that was in
    flight is marked interrupted (live: its hosts are cleaned) and run again. Also starts a
    queued campaign (``nimo serve`` passes its ``presence``, which already holds both). The
    runner is rebuilt from the stored spec (``workbench.runners``) unless ``runner_factory``
    is given. With ``doctor``, a live campaign's hosts are checked first.
    """
    check_json_target(json_out)
    store = open_store(store_url, create=False)  # a mistyped store is named, never made
    try:
        info = store.campaign(name)
        with _owning(store, presence, name) as me:
            me.claim(name)
            check_unchanged(store, info)
            me.lease(name, leased_hosts(info))
            if doctor and info.kind == CampaignKind.LIVE:
                preflight(info.spec["inventory"])
            runner = (runner_factory or open_runner_for)(info)
            info = _complete_replay_spec(store, info, runner)
            # clean first, then mark: a resume killed while cleaning leaves the runs in
            # flight, so the next resume cleans again. A process killed between runs leaves
            # none in flight but its app dirs, and the campaign still active: we hold the
            # claim and the leases, so nothing of this campaign runs now
            runs = store.runs(name)
            in_flight = [r for r in runs if r.status is RunStatus.QUEUED]
            live = info.kind == CampaignKind.LIVE
            if live and (in_flight or runs and _may_have_left(store, info)):
                clean_hosts(info, in_flight, store)
            store.interrupt_in_flight(name)
            return _execute(store, info, runner, json_out, progress)
    finally:
        store.close()


def _may_have_left(store: Store, info: CampaignInfo) -> bool:
    """Whether the campaign's last process may have left objects on its hosts outside any
    run in flight: it was killed while active, or the store still records some (a host cut
    mid-teardown, ``workbench.remote.liveness``: the run is interrupted, its objects stay)."""
    return info.status.active or bool(store.host_objects(info.name))


@contextlib.contextmanager
def _owning(store: Store, presence: Presence | None, name: str) -> Iterator[Presence]:
    """``presence`` as is (its caller releases), or this process's own for the campaign."""
    if presence is not None:
        yield presence
        return
    with Presence(store) as mine:
        yield mine  # leaving drops the owner: its claim and leases go with it


def leased_hosts(info: CampaignInfo) -> list[str]:
    """The hosts a campaign holds alone: its stored ``hosts`` (live: the inventory's hosts
    now) except those the inventory marks ``shareable``."""
    hosts = set(info.spec.get("hosts") or ())
    if info.kind != CampaignKind.LIVE:
        return sorted(hosts)
    from workbench.inventory import load_inventory_hosts

    found = load_inventory_hosts(Path(info.spec["inventory"]))
    return sorted((hosts | {h.name for h in found}) - {h.name for h in found if h.shareable})


def _launch(
    kind: CampaignKind, runner: Runner, design: Any, seed: int, spec: dict[str, Any],
    store_url: str | None, name: str | None, json_out: str | Path | None, progress: bool,
) -> CampaignResult:
    if store_url is None and name is None:
        info = new_campaign(None, kind, None, design, seed, spec, runner.concurrency)
        return _execute(None, info, runner, json_out, progress)
    try:
        refuse_in_memory(store_url)  # the campaign must outlive this process
        if name is not None:
            check_campaign_name(name)
    except (StoreError, ConfigError):
        runner.close()
        raise
    store = open_store(store_url)
    name = name or f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        with Presence(store) as me:
            me.claim(name)  # before it exists: a second `run --name` of it waits for none
            if kind == CampaignKind.LIVE:
                spec = {**spec, SPEC_KEY: meaning_of_file(spec["inventory"])}
            draft = CampaignInfo(name=name, kind=kind, status=CampaignStatus.CREATED,
                                 design={}, spec=spec, seed=seed)
            me.lease(name, leased_hosts(draft))
            info = new_campaign(store, kind, name, design, seed, spec, runner.concurrency)
            return _execute(store, info, runner, json_out, progress)
    except BaseException:
        runner.close()
        raise
    finally:
        store.close()


def _execute(store: Store | None, info: CampaignInfo, runner: Runner,
             json_out: str | Path | None, progress: bool) -> CampaignResult:
    """``lifecycle.execute`` with the progress table, the JSON document rewritten after
    every run; a campaign the executor stopped (fatal error, failure policy) is marked
    ``failed`` with the reason, and the error propagates."""
    from workbench.executor.stops import CampaignStopped

    categories = runner.space.categories  # categorical knobs: shown by name
    if categories and store is not None and info.spec.get("categories") is None:
        info = store.update_spec(info.name, categories={n: list(c)
                                                        for n, c in categories.items()})
    observers: list[Observer] = [
        ProgressTable.for_design(info.design, categories=categories)] if progress else []
    if json_out is not None and str(json_out) != "-":
        observers.append(JsonStream(info, json_out, categories))
    if info.kind == CampaignKind.LIVE:
        from workbench.executor import SSHRunner

        inner = innermost(runner)  # e.g. inside nimo serve's RetryingRunner
        if isinstance(inner, SSHRunner):  # name and record the objects runs make on hosts
            inner.attach(info.name, store)
    try:
        result = execute(store, info, runner, observers=observers)
    except CampaignStopped as e:
        if store is not None:
            store.set_status(info.name, CampaignStatus.FAILED, stopped_because=one_line(e))
        raise
    result = _with_replay_figures(store, info, runner, result)
    if json_out is not None:
        write_json(result, json_out, categories)
    return result


def preflight(inventory_path: str | Path) -> None:
    """``nimo doctor`` on the inventory's hosts; its first blocker as a one-line error."""
    from workbench.doctor import preflight as check

    check(str(inventory_path))


class JsonStream(Observer):
    """Rewrites the ``--json`` document (atomically) after every told run, so a crash or a
    kill leaves the campaign so far; ``stopped_because`` stays null until it ends. A device
    or a FIFO gets the final document only (written once, like stdout)."""

    def __init__(self, info: CampaignInfo, path: str | Path,
                 categories: Categories | None = None) -> None:
        self.info = info
        self.path = path
        self.live = not _special_file(Path(path))
        self.categories = categories or {}
        self.records: list[IterationRecord] = []

    def iteration(self, outcome: RunOutcome, record: IterationRecord, model: Any) -> None:
        self.records.append(record)
        if not self.live:
            return
        partial = CampaignResult(
            name=self.info.name, design=self.info.design, iterations=tuple(self.records),
            stopped_because=None, model=model, all_samples_s=self.info.spec.get("all_samples_s"),
            final_extra={"in_progress": True})
        write_json(partial, self.path, self.categories)


def check_json_target(path: str | Path | None) -> None:
    """Refuse, before anything runs, a ``--json`` path that cannot be written: its directory
    must exist and be writable, and the path must not be a directory."""
    if path is None or str(path) == "-":
        return
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise FileAccessError(f"--json {p}: is a directory", hint="give a file name")
    if not parent.is_dir():
        raise FileAccessError(f"--json {p}: directory {parent} does not exist",
                              hint=f"create it first: mkdir -p {parent}")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise FileAccessError(f"--json {p}: not writable")


def _complete_replay_spec(store: Store, info: CampaignInfo, runner: Runner) -> CampaignInfo:
    """A submitted replay campaign learns its external test set (and calibration split)
    when it first starts (also when ``nimo serve`` wraps its runner)."""
    runner = innermost(runner)
    if not isinstance(runner, ReplayRunner) or "external" in info.spec:
        return info
    return store.update_spec(
        info.name, external=_pairs(runner.external), calibration=_pairs(runner.calibration),
        all_samples_s=runner.all_samples_s,
    )


def _with_replay_figures(store: Store | None, info: CampaignInfo, runner: Runner,
                         result: CampaignResult) -> CampaignResult:
    """A replay's result with the figures it adds to ``final`` (``workbench.replay_family``:
    median APE, per-target errors, the design's model family), the family also stored as
    the spec's ``family_result`` (``nimo model export --family``). Here, not in the replay
    CLI, so that a replay run by ``nimo serve`` or ``campaign resume`` ends the same."""
    from workbench.replay_family import scale_final
    from workbench.replay_scale import with_final

    inner = innermost(runner)
    if not isinstance(inner, ReplayRunner):
        return result
    result = with_final(result, scale_final(result, inner, result.design))
    family = result.final_extra.get("family")
    if store is not None and family:
        store.update_spec(info.name, family_result=family)
    return result


def _pairs(cases: Sequence[tuple[Mapping[str, float], float]]) -> list[list[Any]]:
    """(assignment, T) cases as the JSON the campaign spec stores."""
    return [[dict(a), float(T)] for a, T in cases]


def clean_hosts(info: CampaignInfo, interrupted: Sequence[StoredRun],
                store: Store | None = None) -> None:
    """Remove what earlier processes of the campaign left on the hosts: the runs a crash
    interrupted, app dirs (this campaign's objects only, ``workbench.clean``; the store
    forgets them)."""
    from workbench import clean

    runs = ", ".join(str(r.run) for r in interrupted)
    after = f"after interrupted run(s) {runs}" if runs else "of an earlier process"
    reports = clean.clean_inventory(info.spec["inventory"], info.name, store)
    for host, report in reports.items():
        if isinstance(report, BaseException):
            print(f"nimo: warning: could not clean {host} {after}: {report}", file=sys.stderr)


def write_json(result: CampaignResult, path: str | Path,
               categories: Categories | None = None) -> Path:
    """Write ``result.to_dict()`` (non-finite numbers as null; a categorical attribute's
    levels as their names) atomically (a temporary file renamed over ``path``; a device or a
    FIFO is written through, never replaced); ``-`` means stdout."""
    doc = named_document(result.to_dict(), categories or {})
    text = json.dumps(finite_document(doc), indent=2, allow_nan=False) + "\n"
    if str(path) == "-":
        print(text, end="")
        return Path("-")
    path = Path(path)
    if _special_file(path):  # /dev/null, a FIFO: write through, never replace
        try:
            with path.open("w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
        return path
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                   dir=path.parent if str(path.parent) else ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)  # readers see the old document or the new one, never half
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        raise FileAccessError(f"cannot write {path}: {e.strerror or e}") from None
    return path


__all__ = ["check_json_target", "launch_live", "launch_replay", "resume", "write_json"]


def _special_file(path: Path) -> bool:
    """``path`` exists and is neither a regular file nor a directory (a device, a FIFO)."""
    return path.exists() and not path.is_file() and not path.is_dir()
