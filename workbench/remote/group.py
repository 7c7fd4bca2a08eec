"""Run steps concurrently and collect ``{key: result | exception}``; one step on many hosts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from workbench.errors import HostGroupError
from workbench.remote.connection import Connection
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
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nimo-step") as pool:
        futures = {key: pool.submit(fn) for key, fn in tasks.items()}
    return {key: f.exception() or f.result() for key, f in futures.items()}


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
