"""Run steps concurrently and collect ``{key: result | exception}``; one step on many hosts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from functools import partial
from typing import Any, TypeVar

from workbench.errors import HostGroupError
from workbench.exitstatus import interrupts_deferred
from workbench.remote.connection import Connection
from workbench.remote.handshakes import abandon_all
from workbench.remote.result import CommandResult

T = TypeVar("T")
MAX_THREADS = 16


def run_parallel(tasks: Mapping[str, Callable[[], T]]) -> dict[str, T | BaseException]:
    """Call every task concurrently (a single one inline); never raises.

    Returns ``{key: value or the exception raised}`` in the order of ``tasks``.
    """
    if len(tasks) <= 1:
        return {key: _call(fn) for key, fn in tasks.items()}
    workers = min(MAX_THREADS, len(tasks))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nimo-step")
    futures = {key: pool.submit(fn) for key, fn in tasks.items()}
    try:
        wait_in_slices(futures.values())
    except KeyboardInterrupt:
        _settle_interrupted(futures.values())
        raise
    finally:
        pool.shutdown(wait=False)
    return {key: f.exception() or f.result() for key, f in futures.items()}


def wait_in_slices(futures: Collection[Future[Any]]) -> None:
    """Wait for ``futures`` in short slices, so an interrupt is seen at once (also one that
    does not wake a blocked wait, such as ``_thread.interrupt_main``)."""
    pending = set(futures)
    while pending:
        pending = wait(pending, timeout=0.2).not_done


def _settle_interrupted(futures: Collection[Future[Any]]) -> None:
    """After Ctrl-C: drop the steps not started, cut the SSH handshakes in flight (a hung
    host would hold its thread for the whole connect timeout), and let the running steps
    end (each has its own timeout), so nothing runs on a host once the interrupt is raised.
    A second interrupt meanwhile is noted; a third stops the wait."""
    with interrupts_deferred(reraise=False) as noted:
        for f in futures:
            f.cancel()
        abandon_all()
        pending = set(futures)
        said = False
        while pending and len(noted) < 2:
            if noted and not said:
                print("nimo: waiting for the steps running on hosts to end; interrupt once "
                      "more to leave them", file=sys.stderr, flush=True)
                said = True
            pending = wait(pending, timeout=0.2).not_done


def _call(fn: Callable[[], T]) -> T | BaseException:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - collected, like a thread's exception
        return e


def map_hosts(
    connections: Iterable[Connection],
    fn: Callable[[Connection], T],
    *,
    raise_on_error: bool = False,
) -> dict[str, T | BaseException]:
    """Call ``fn(conn)`` for every connection in parallel threads.

    Returns ``{conn.name: value or the exception raised}``; with ``raise_on_error`` a single
    :class:`HostGroupError` is raised instead when any host failed.
    """
    results = run_parallel({c.name: partial(fn, c) for c in connections})
    if raise_on_error and any(isinstance(r, BaseException) for r in results.values()):
        raise HostGroupError(results)
    return results


def run_all(
    connections: Iterable[Connection],
    argv: Sequence[str],
    *,
    timeout: float | None = None,
    check: bool = True,
    raise_on_error: bool = False,
) -> dict[str, CommandResult | BaseException]:
    """Run the same ``argv`` on every host concurrently (see :func:`map_hosts`)."""
    return map_hosts(
        connections,
        lambda c: c.run(argv, timeout=timeout, check=check),
        raise_on_error=raise_on_error,
    )
