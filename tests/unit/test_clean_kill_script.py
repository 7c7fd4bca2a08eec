"""`nimo clean`'s kill script, run by a real shell as it is over SSH (a login shell, then
`timeout`, then `sh -c`): it kills the processes naming a recorded dir, never its own
ancestors, whose command lines name the dirs too (it killed its login shell and reported it
as a leftover process after every interrupted run)."""

from __future__ import annotations

import shlex
import subprocess

from workbench.clean import _KILL_NAMING
from workbench.remote.connection import command_line


def test_the_kill_script_kills_a_leftover_and_spares_its_own_ancestors(tmp_path):
    run_dir = f"{tmp_path}/nimo-r1-work-x/"
    leftover = subprocess.Popen(["sh", "-c", "sleep 60", run_dir])
    try:
        line = command_line(["sh", "-c", _KILL_NAMING, "nimo-kill", run_dir], timeout=30)
        # as over SSH: the login shell stays the parent of `timeout` (it does not exec it)
        done = subprocess.run(["bash", "-c", f"{line}; exit $?"], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [str(leftover.pid)]
        assert leftover.wait(timeout=10) == -9
    finally:
        leftover.kill()
    assert shlex.split(line)[:2] == ["timeout", "--signal=KILL"]  # the wrapper it spares
