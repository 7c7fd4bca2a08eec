"""Why the executor stops a campaign instead of recording one more failed run.

Two things end a live campaign at once:

* a fatal setup error (``FatalSetupError``): a host refused our key or its host key is
  unknown or changed, known_hosts or the key file is missing (``HostRefused``), or a tool the
  run needs is not installed (a remote command exited 127). Retrying cannot help, so the run
  is neither retried nor recorded as failed: it stays in flight and a resume runs it again
  once the workbench is fixed;
* the inventory's failure policy (``FailureBudgetExceeded``): ``policies.on_failure: stop``
  after a failed run, or ``policies.max_failures`` failed runs. The failed runs are recorded;
  the runs not started yet are not.

Both are ``WorkbenchError``s (one line on the command line); ``workbench.campaigns`` marks
the campaign ``failed`` with the reason, and the CLI exits with its own status for each.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

from workbench.emulation import Cgroup
from workbench.errors import HostRefused, RemoteCommandFailed, WorkbenchError
from workbench.retry import until_done

MISSING_TOOL_EXIT = 127  # the shell's (and env's, timeout's) "command not found"


class CampaignStopped(WorkbenchError):
    """The executor stopped handing out runs; ``str()`` says why."""


class FatalSetupError(CampaignStopped):
    """A host cannot serve any run until someone fixes it (see the module)."""


class FailureBudgetExceeded(CampaignStopped):
    """The inventory's ``policies`` say stop after this many failed runs."""


def fatal_cause(error: BaseException) -> str | None:
    """Why ``error`` (or an error it was raised from) makes every further run fail, or None
    when it concerns this run only."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, HostRefused):
            return str(e)
        if isinstance(e, RemoteCommandFailed) and e.result.exit_code == MISSING_TOOL_EXIT:
            tool = e.result.argv[0] if e.result.argv else "?"
            return (f"{e.result.host}: a command the run needs is not installed "
                    f"(`{tool}`, exit 127): {e}")
        e = e.__cause__ or e.__context__
    return None


class RunAborted(KeyboardInterrupt):
    """The runs in flight were killed and torn down because the process is stopping
    (Ctrl-C, SIGTERM, SIGHUP, a service shutting down); handled as an interrupt."""


@contextlib.contextmanager
def killed_on(abort: threading.Event, cg: Cgroup) -> Iterator[None]:
    """While inside, setting ``abort`` (an interrupt, a shutdown) kills every process of
    the run's cgroup (G)."""
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if abort.wait(0.2):
                _kill_members(cg, done)
                return

    watcher = threading.Thread(target=watch, daemon=True, name="nimo-abort")
    watcher.start()
    try:
        yield
    finally:
        done.set()


def _kill_members(cg: Cgroup, done: threading.Event, attempts: int = 5) -> None:
    """Kill G (every member of its cgroup; the teardown removes the cgroup, idempotent),
    again while G still runs and the removal failed (a busy host can drop one command)."""
    error = until_done(cg.remove, attempts, stop=done)
    if error is not None:
        print(f"nimo: could not kill G on interrupt ({error}); waiting for it to end",
              file=sys.stderr, flush=True)
