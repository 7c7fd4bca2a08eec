"""The Slurm task wrapper on this machine's real cgroup filesystem (root only, no Slurm).

Tasks of one job on one node share a per-job cgroup; a task that ends removes it when it is
empty. A sibling that made the dir but had not joined yet used to lose it, and its usage read
then failed with a shell error that pushed the application's own stderr out of the reason.
"""

from __future__ import annotations

import glob
import os
import secrets
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from workbench.slurm.job import TASK_WRAPPER

pytestmark = pytest.mark.lab

TASKS, JOBS = 3, 150


def _task(wrapper: Path, job: str) -> str:
    env = {**os.environ, "SLURM_JOB_ID": job, "SLURMD_NODENAME": "n1"}
    res = subprocess.run(["sh", str(wrapper), "50000", "/nonexistent-nimo-cmd"],
                         capture_output=True, text=True, env=env, timeout=30)
    assert res.returncode == 127, res.stderr
    return res.stderr


def test_sibling_tasks_failing_at_once_report_only_their_own_error(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("the lab tests run as root (scripts/test.sh)")
    wrapper = tmp_path / "task.sh"
    wrapper.write_text(TASK_WRAPPER)
    tag = f"t{secrets.token_hex(4)}"
    with ThreadPoolExecutor(TASKS) as pool:
        errs = [e for j in range(JOBS)
                for e in pool.map(_task, [wrapper] * TASKS, [f"{tag}x{j}"] * TASKS)]
    foreign = [ln for e in errs for ln in e.splitlines()
               if "nonexistent-nimo-cmd" not in ln and not ln.startswith("nimo-cpu n1 ")]
    assert foreign == [], foreign[:5]
    assert all(e.count("nimo-cpu n1 ") == 1 for e in errs)
    assert glob.glob(f"/sys/fs/cgroup/**/slurm-nimo-j{tag}*", recursive=True) == []
