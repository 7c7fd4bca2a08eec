"""Exit status and summary of a campaign, for automation that must trust them.

``nimo campaign run``, ``nimo campaign resume`` and ``nimo replay`` exit with:

* 0 (``OK``): the campaign ended by its stop rule (the error target, a plateau, a user budget
  ``stop.max_runs``/``stop.max_learning_s``, or no assignment left) with a model, and every
  holdout run succeeded;
* 2 (``USAGE``): a user or fatal setup error, one line on stderr (bad input, a host that
  refuses our key or host key, a missing tool, a blocker found by ``nimo doctor``);
* 3 (``FAILED``): the campaign failed or produced no model (e.g. every run failed, or 10
  failed in a row);
* 4 (``RUNS_FAILED``): runs failed beyond policy: the inventory's ``policies`` stopped the
  campaign (``on_failure: stop``, ``max_failures``), or holdout runs failed, so the reported
  holdout accuracy covers only some of them;
* 5 (``BUSY``): nothing was run: another live process (on any machine) owns the campaign, or
  another campaign holds one of its hosts (not marked ``shareable``); one line names the
  owner (host, pid, since) or the holder. Retry when it ends;
* 130 (``INTERRUPTED``): Ctrl-C; 128 + N for signal N (SIGTERM 143, SIGHUP 129). The
  campaign is marked interrupted; ``nimo campaign resume`` continues it.

The summary says the failures first, so it never reads like success when runs failed.
"""

from __future__ import annotations

import contextlib
import enum
import signal
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nimo.campaign.metrics import (
    extrapolated_knobs,
    far_from_runs,
    measured_values,
    nonpositive_predictions,
    recorded_values,
    unmeasured_knobs,
    unmeasured_levels,
    unseen_categories,
)
from nimo.records import RunPurpose

# the runs a model is fitted on
TRAINING_PURPOSES = frozenset({RunPurpose.REFERENCE, RunPurpose.TRAIN})
# The share of candidates far from every run above which the summary says so (a few far
# candidates are the space's corners; more mean regions the runs never came near).
FAR_WARN_SHARE = 0.10


class Exit(enum.IntEnum):
    OK = 0
    USAGE = 2
    FAILED = 3
    RUNS_FAILED = 4
    BUSY = 5
    INTERRUPTED = 130


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread so a campaign tears down as on Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def interrupted_status(error: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 128 + N for signal N."""
    return 128 + error.signum if isinstance(error, Terminated) else int(Exit.INTERRUPTED)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise ``Terminated`` (a KeyboardInterrupt) in the
    main thread; the previous handlers come back on exit. A no-op off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def interrupts_deferred(reraise: bool = True) -> Iterator[list[KeyboardInterrupt]]:
    """While inside, Ctrl-C, SIGTERM and SIGHUP are noted, not raised (a teardown that must
    finish); with ``reraise`` the first one noted is raised on a normal exit. A no-op off
    the main thread."""
    noted: list[KeyboardInterrupt] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return

    def note(signum: int, frame: Any) -> None:
        noted.append(KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum))

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield noted
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if noted and reraise:
        raise noted[0]


def stacks_on_sigusr1() -> None:
    """``kill -USR1 PID`` prints every thread's stack on stderr (a process that will not
    stop tells where it waits); nothing when stderr is no file (in-process callers)."""
    import faulthandler
    import io
    import sys

    with contextlib.suppress(io.UnsupportedOperation, AttributeError, ValueError, RuntimeError):
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)


# -- why a campaign stopped ----------------------------------------------------------------
_STOP_KINDS = (
    ("budget spent", "a user budget"),
    ("plateaued", "the error plateau rule"),
    ("internal error", "the error target"),
    ("candidate", "no assignment left"),
    ("failed runs in a row", "failed runs"),
)


def stop_kind(reason: str | None) -> str:
    """What ended learning, in words: ``the error target``, ``a user budget``, ...; read
    from the reason's first clause (what follows a ';' is the delivered model's error)."""
    text = (reason or "").split(";")[0]
    for key, kind in _STOP_KINDS:
        if key in text:
            return kind
    return "the stop rule"


# -- the verdict on a finished campaign ----------------------------------------------------
# A drift warning: at least 5 holdout runs, 80% or more of them off the model on one side,
# by 10% or more in the median (a model that fits its runs errs on both sides of random ones).
# The recheck (the reference assignment re-run last) confirms a holdout shift when it moved
# the same way by half as much or more; alone, it warns from a 20% change (a single run).
DRIFT_PCT = 10.0
DRIFT_SHARE = 0.8
DRIFT_MIN_RUNS = 5
RECHECK_PCT = 20.0


@dataclass(frozen=True)
class Verdict:
    """The exit status of a campaign document (``CampaignResult.to_dict()``) and the lines
    a summary must show before any accuracy figure."""

    status: Exit
    problems: tuple[str, ...]
    warnings: tuple[str, ...]


def verdict(doc: Mapping[str, Any]) -> Verdict:
    """Judge a campaign document: failures first (see the module for the codes)."""
    final = doc.get("final") or {}
    iterations = doc.get("iterations") or []
    failed = [it for it in iterations if it.get("status", "done") != "done"]
    problems: list[str] = []
    status = Exit.OK
    if failed:
        last = failed[-1]
        problems.append(f"{len(failed)} of {len(iterations)} runs failed (last: run "
                        f"{last['run']}: {last.get('reason') or 'no reason'})")
    if "failed runs in a row" in (doc.get("stopped_because") or ""):
        status = Exit.FAILED
        problems.insert(0, f"FAILED: {doc['stopped_because']}")
    if doc.get("model") is None:
        status = Exit.FAILED
        problems.insert(0, "FAILED: no model (no run gave a usable sample)")
    h_failed = int(final.get("holdout_failed") or 0)
    if h_failed:
        status = Exit.RUNS_FAILED if status is Exit.OK else status
        problems.append(f"{h_failed} of {final.get('holdout_runs')} holdout runs failed: the "
                        f"holdout figures cover {final['holdout_runs'] - h_failed} runs only")
    return Verdict(status, tuple(problems),
                   model_warnings(doc.get("model"), iterations) + drift_warning(final))


def drift_warning(final: Mapping[str, Any]) -> tuple[str, ...]:
    """A warning when the holdout runs lie off the model (``holdout_shifted``), told apart by
    the recheck (``recheck_drift_pct``, the reference assignment re-run last) as the hosts'
    drift or the model's bias; or, without such a shift, when the recheck alone moved by
    ``RECHECK_PCT`` or more."""
    recheck = final.get("recheck_drift_pct")
    said = "" if recheck is None else (
        f"; the reference assignment, re-run last, took {_signed(recheck)} than while learning")
    if not holdout_shifted(final):
        if recheck is None or abs(recheck) < RECHECK_PCT:
            return ()
        return (f"the reference assignment, re-run last, took {_signed(recheck)} than while "
                "learning: the hosts' conditions changed during the campaign (drift)",)
    shift = float(final["holdout_shift_pct"])
    unshifted = final.get("holdout_mape_unshifted_pct")
    rest = "" if unshifted is None else f" (holdout MAPE without that shift {unshifted:.1f}%)"
    head = (f"the holdout runs took {_signed(shift)} than predicted in the median, "
            f"{final['holdout_shift_share']:.0%} of them on that side{rest}{said}")
    if recheck is None:
        cause = ("the hosts' conditions likely changed since learning (drift); the figures "
                 "judge the model under other conditions")
    elif drift_confirmed(final):
        cause = ("the hosts' conditions changed during the campaign (drift); the figures "
                 "judge the model under other conditions")
    else:
        cause = "the hosts did not drift that way: the model itself is off by about that factor"
    return (f"{head}: {cause}",)


def holdout_shifted(final: Mapping[str, Any]) -> bool:
    """At least ``DRIFT_MIN_RUNS`` holdout runs, ``DRIFT_SHARE`` of them or more to one side
    of the model, by ``DRIFT_PCT`` or more in the median (``holdout_shift``)."""
    shift, share = final.get("holdout_shift_pct"), final.get("holdout_shift_share")
    runs = int(final.get("holdout_runs") or 0) - int(final.get("holdout_failed") or 0)
    return (shift is not None and share is not None and runs >= DRIFT_MIN_RUNS
            and abs(shift) >= DRIFT_PCT and share >= DRIFT_SHARE)


def drift_confirmed(final: Mapping[str, Any]) -> bool:
    """The holdout shift is the hosts' drift: the recheck moved the same way by half the
    shift or more."""
    recheck = final.get("recheck_drift_pct")
    if not holdout_shifted(final) or recheck is None:
        return False
    shift = float(final["holdout_shift_pct"])
    return recheck * shift > 0 and abs(recheck) >= abs(shift) / 2


def _signed(pct: float) -> str:
    """``+12.3`` -> ``12% longer``; ``-12.3`` -> ``12% less time``."""
    return f"{abs(pct):.0f}% {'longer' if pct > 0 else 'less time'}"


def model_warnings(model: Any, iterations: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Knobs never measured (every run that varied them failed), then knobs whose levels
    reach beyond the values the model was fitted on (it extrapolates there), then common
    levels between measured ones that no run held (``training.unmeasured_levels``: it
    interpolates there) and categorical knobs with categories it was not fitted on, then
    a large share of candidates far from every run (``training.far_share``), then
    predicted times that are not positive (``training.nonpositive_share``). Those values
    are the model's own record (``training.measured_range``, ``measured_categories``: PBDF
    runs a design trains on included) or, for a model without it, the training runs'."""
    unmeasured = unmeasured_knobs(
        (it["assignment"], it.get("status", "done") == "done") for it in iterations)
    attributes = model.get("attributes") if isinstance(model, Mapping) else None
    known = [a for a in attributes or () if isinstance(a, Mapping) and "name" in a]
    categories = {a["name"]: a["categories"] for a in known if a.get("categories")}
    levels = {a["name"]: a["levels"] for a in known
              if "levels" in a and a["name"] not in categories}
    for u in unmeasured:
        levels.pop(u.knob, None)
        categories.pop(u.knob, None)
    measured = fitted_values(model, levels, categories, [
        it["assignment"] for it in iterations
        if it.get("status", "done") == "done" and it.get("purpose") in TRAINING_PURPOSES])
    return (tuple(u.warning() for u in unmeasured)
            + tuple(e.warning() for e in extrapolated_knobs(levels, measured))
            + tuple(u.warning() for u in unmeasured_levels(model) if u.knob in levels)
            + tuple(c.warning() for c in unseen_categories(categories, measured))
            + tuple(f.warning() for f in [far_from_runs(model, FAR_WARN_SHARE)]
                    if f is not None)
            + tuple(n.warning() for n in [nonpositive_predictions(model)] if n is not None))


def fitted_values(model: Any, levels: Mapping[str, Any], categories: Mapping[str, Any],
                  training: Sequence[Mapping[str, float]]) -> dict[str, list[float]]:
    """Each knob's values the model was fitted on: its record where readable, else the
    ``training`` runs'."""
    measured = measured_values(training)
    for key, knobs in (("measured_range", levels), ("measured_categories", categories)):
        measured.update(recorded_values(model, key, knobs))
    return measured
