"""Run one step on many hosts concurrently and collect ``{host: result | exception}``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from workbench.errors import HostGroupError
from workbench.remote.connection import Connection
from workbench.remote.result import CommandResult

T = TypeVar("T")



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
    conns = list(connections)
    results: dict[str, T | BaseException] = {}
    if not conns:
        return results
    with ThreadPoolExecutor(max_workers=min(16, len(conns))) as pool:
        futures = {c.name: pool.submit(fn, c) for c in conns}
        for name, fut in futures.items():
            try:
                results[name] = fut.result()
            except Exception as e:  # collected per host, never lost
                results[name] = e
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
