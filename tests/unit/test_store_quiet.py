"""An interrupt during a fetch leaves one report, not a second traceback from the pool."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from sqlalchemy import create_engine

from nimo.store.quiet import arose_during_interrupt, quiet_interrupted_cleanup
from nimo.store.sql import SqlStore


class _ClosedCursor:
    def close(self) -> None:
        raise sqlite3.ProgrammingError("Cannot operate on a closed database.")


def _close_failing_cursor(engine, *, while_interrupted: bool) -> None:
    """What SQLAlchemy does when an exception interrupts a fetch: close the cursor, log a
    failure to do so."""
    with engine.connect() as conn:
        if not while_interrupted:
            conn._safe_close_cursor(_ClosedCursor())
            return
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            conn._safe_close_cursor(_ClosedCursor())


@pytest.mark.parametrize("url", ["sqlite://", None])
def test_a_cursor_close_failing_during_an_interrupt_is_not_logged(url, tmp_path, caplog
                                                                   ) -> None:
    if url is None:  # the store's own engine
        engine = SqlStore(f"sqlite:///{tmp_path / 's.db'}").engine
    else:
        engine = create_engine(url)
        quiet_interrupted_cleanup(engine)
        quiet_interrupted_cleanup(engine)  # once per logger
        assert len(engine.pool.logger.filters) == 1
    with caplog.at_level(logging.DEBUG, logger="sqlalchemy.pool"):
        _close_failing_cursor(engine, while_interrupted=True)
        assert not [r for r in caplog.records if "Error closing cursor" in r.getMessage()]
        _close_failing_cursor(engine, while_interrupted=False)  # anything else still shows
        assert [r for r in caplog.records if "Error closing cursor" in r.getMessage()]


def test_the_interrupt_is_found_anywhere_in_the_context_chain() -> None:
    assert not arose_during_interrupt(None)
    assert arose_during_interrupt(KeyboardInterrupt())
    inner = ValueError("cleanup")
    inner.__context__ = KeyboardInterrupt()
    outer = RuntimeError("more cleanup")
    outer.__context__ = inner
    assert arose_during_interrupt(outer)
    loop = ValueError("a")
    loop.__context__ = loop  # a cycle ends the walk
    assert not arose_during_interrupt(loop)
