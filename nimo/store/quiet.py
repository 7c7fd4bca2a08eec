"""No second traceback after an interrupt.

When Ctrl-C or SIGTERM (a ``KeyboardInterrupt``) lands while SQLAlchemy fetches rows, it
invalidates the connection and then fails to close the cursor on it; its pool logs that
failure as an error with a traceback (``Error closing cursor ... Cannot operate on a closed
database``). The interrupt itself is what nimo handles and reports (exit 130 or 128 + N, the
campaign marked interrupted); the logged traceback only reads like a crash. The filter here
drops the pool's log records whose exception arose while an interrupt was being handled, and
nothing else.
"""

from __future__ import annotations

import logging

from sqlalchemy.engine import Engine


def arose_during_interrupt(error: BaseException | None) -> bool:
    """Whether ``error`` is a KeyboardInterrupt or was raised while one was handled."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__context__
    return False


class DropInterruptedCleanup(logging.Filter):
    """Drops a record whose exception arose while an interrupt was handled."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not arose_during_interrupt(error)


_FILTER = DropInterruptedCleanup()


def quiet_interrupted_cleanup(engine: Engine) -> None:
    """Install the filter on ``engine``'s pool logger (once per logger)."""
    logger = engine.pool.logger
    target = getattr(logger, "logger", logger)  # with echo_pool, a wrapper around it
    if isinstance(target, logging.Logger) and _FILTER not in target.filters:
        target.addFilter(_FILTER)
