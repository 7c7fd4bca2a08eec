"""Run one step on many hosts concurrently and collect ``{host: result | exception}``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from workbench.exceptions import WorkbenchError
from workbench.remote.connection import Connection
from workbench.remote.result import CommandResult

T = TypeVar("T")


class HostGroupError(WorkbenchError):
    """At least one host failed a group step; ``.results`` maps host -> value or exception."""

    def __init__(self, results: Mapping[str, object]) -> None:
        self.results = dict(results)
        self.failures = {h: r for h, r in self.results.items() if isinstance(r, BaseException)}
        detail = "; ".join(f"{h}: {e}" for h, e in sorted(self.failures.items()))
        super().__init__(f"{len(self.failures)} of {len(self.results)} hosts failed: {detail}")


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
