"""Local processes: whether a PID is alive (a zombie counts as gone)."""

from __future__ import annotations

import contextlib
import os


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` exists on this machine and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    return True
