"""Ctrl-C with a frozen compute host: seconds from the interrupt to the exit.

On a running lab (``nimo lab up DIR``): a live campaign of the lab's inventory starts; once
its application runs on compute1, every sshd of compute1 is stopped (SIGSTOP: a frozen host
as SSH sees it) and the campaign gets Ctrl-C; the host is resumed after the exit. Prints
each try's seconds, exit code and interrupted/failed run counts, then the median. The
campaign's leftovers are removed with ``nimo clean --campaign`` after each try.
Usage (root): python benchmarks/hung_host.py LABDIR [--tries 5]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NIMO = [sys.executable, "-m", "workbench"]


def sshd_pids(netns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout
    pids = []
    for p in out.split():
        with contextlib.suppress(OSError):
            if Path(f"/proc/{p}/comm").read_text().startswith("sshd"):
                pids.append(int(p))
    return pids


def app_running(netns: str) -> bool:
    """Whether the lab's application (a script of the campaign's app dir, not its dataset
    generator) runs in ``netns`` (lab hosts share one PID space: ``ip netns pids``)."""
    for pid in subprocess.run(["ip", "netns", "pids", netns], capture_output=True,
                              text=True).stdout.split():
        with contextlib.suppress(OSError):
            args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            if "-apps-" in args and "python3" in args and "gen_dataset" not in args:
                return True
    return False


def one_try(lab: Path, store: str, name: str) -> tuple[float, int, dict[str, int]]:
    from workbench.lab import Lab

    netns = Lab(lab).host("compute1").netns
    inventory = str(lab / "inventory.yaml")
    proc = subprocess.Popen([*NIMO, "campaign", "run", inventory, "--name", name, "--store",
                             store, "--skip-doctor", "--quiet"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not app_running(netns) and time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the campaign ended before its first run: {proc.communicate()[1]}")
        time.sleep(0.2)
    pids = sshd_pids(netns)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(0.5)
        pressed = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=600)
        took = time.monotonic() - pressed
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    runs = subprocess.run([*NIMO, "campaign", "status", name, "--store", store, "--format",
                           "json"], cwd=ROOT, capture_output=True, text=True)
    counts = json.loads(runs.stdout).get("runs", {}) if runs.returncode == 0 else {}
    subprocess.run([*NIMO, "clean", "--campaign", name, inventory], cwd=ROOT,
                   capture_output=True)
    return took, proc.returncode, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lab", type=Path, help="a lab's directory (nimo lab up DIR)")
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()
    times = []
    with tempfile.TemporaryDirectory(prefix="nimo-hung-") as tmp:
        store = f"sqlite:///{tmp}/hung.db"
        for i in range(args.tries):
            took, code, counts = one_try(args.lab, store, f"hung{i}")
            times.append(took)
            print(f"try {i + 1}: {took:.1f} s from Ctrl-C to exit, exit {code}, runs {counts}",
                  flush=True)
    print(f"median {statistics.median(times):.1f} s over {len(times)} tries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
