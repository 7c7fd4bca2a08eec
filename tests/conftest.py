"""Fixtures shared by the unit and the integration tests."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts TCP connections and never says a word (a hung
    sshd); every connection is held until the test ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(32)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()
    for s in held:
        s.close()
