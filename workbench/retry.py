"""Repeat a side effect a busy host may drop once (a cgroup removal, an ``rm -rf``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def until_done(action: Callable[[], object], attempts: int, pause_s: float = 0.2,
               stop: threading.Event | None = None,
               after_failure: Callable[[], object] | None = None) -> Exception | None:
    """Call ``action`` until it returns, at most ``attempts`` times; None once it succeeded,
    else its last error. Between attempts ``after_failure`` runs (e.g. reopen a connection)
    and the pause grows by ``pause_s`` each time. With ``stop``, the pause follows every
    failure (the last one too) and a ``stop`` set meanwhile ends the retries quietly (None):
    what the action was for happened anyway."""
    error: Exception | None = None
    for i in range(attempts):
        try:
            action()
            return None
        except Exception as e:  # the caller decides what an unrecovered error means
            error = e
        if after_failure is not None:
            after_failure()
        if stop is not None:
            if stop.wait(pause_s * (i + 1)):
                return None
        elif i < attempts - 1 and pause_s > 0:
            time.sleep(pause_s * (i + 1))
    return error
