"""Which compute host takes the next run: a host whose run failed for a host reason (link
down, unreachable, connection dropped) leaves the rotation for a backoff that doubles with
each failure in a row (``BASE_S`` .. ``MAX_S``), and is tried again after it; a success
puts it back for good. The run it failed is handed to another host, so the run budget is
not spent on one broken host while another is healthy. Pure logic (the clock is injected).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

BASE_S = 2.0
MAX_S = 60.0


@dataclass
class _State:
    failures: int = 0  # host failures in a row
    benched_until: float = 0.0
    reasons: list[str] = field(default_factory=list)


class HostRotation:
    """Thread-safe record of each compute host's recent host failures and backoff."""

    def __init__(self, hosts: Sequence[str], *, base_s: float = BASE_S, max_s: float = MAX_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.hosts = tuple(hosts)
        self.base_s = base_s
        self.max_s = max_s
        self.clock = clock
        self._state = {h: _State() for h in self.hosts}
        self._lock = threading.Lock()

    def wait_s(self, host: str) -> float:
        """Seconds until ``host`` may take a run again (0: now)."""
        with self._lock:
            return max(0.0, self._state[host].benched_until - self.clock())

    def failures(self, host: str) -> int:
        """Host failures of ``host`` in a row (0 after a success)."""
        with self._lock:
            return self._state[host].failures

    def failed(self, host: str, reason: str, spent_s: float = 0.0) -> float:
        """Record a host failure of ``host`` that took ``spent_s`` to show; returns the
        backoff it now sits out. The backoff starts at the larger of ``base_s`` and
        ``spent_s`` (a hung host whose connects time out after 30 s sits out at least as
        long, so that the healthy hosts take the runs meanwhile: with one run asked at a
        time, every run it takes stalls the campaign) and doubles up to the larger of
        ``max_s`` and 8 x ``spent_s``."""
        with self._lock:
            st = self._state[host]
            st.failures += 1
            st.reasons = [*st.reasons[-4:], reason]
            start = max(self.base_s, spent_s)
            backoff = min(max(self.max_s, 8 * spent_s), start * 2 ** (st.failures - 1))
            st.benched_until = self.clock() + backoff
            return backoff

    def succeeded(self, host: str) -> None:
        """``host`` ran a run: back in the rotation, its backoff forgotten."""
        with self._lock:
            self._state[host] = _State()

    def benched(self) -> dict[str, float]:
        """Hosts out of the rotation now, with the seconds left."""
        now = self.clock()
        with self._lock:
            return {h: s.benched_until - now for h, s in self._state.items()
                    if s.benched_until > now}
