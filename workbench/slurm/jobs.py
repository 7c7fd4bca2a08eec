"""Each run's directory on shared storage, and submitting or adopting its job.

``<work_dir>/jobs/<tag>/run-<N>/`` holds the batch script, the job id (written as soon as
sbatch returns), the step's ``started``/``result.json``, stdout and stderr, and two markers
nimo writes: ``collected`` once the outcome was handed to the campaign (the store recorded
it) and ``cancelled`` when nimo cancelled the job itself. Starting run N therefore:

* a directory with a job id and no marker: the job of a previous life (nimo was killed);
  it is adopted, not submitted again: polled if still active, collected if finished;
* a directory without a job id (killed between creating it and sbatch returning): a job
  with the run's name still in squeue is adopted, otherwise the run is submitted;
* ``collected`` or ``cancelled``: that attempt is over (a retry, or a reopened run): the
  directory is moved aside to ``run-<N>.<k>`` and the run is submitted again.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from nimo.records import RunRequest

JOB_ID = "job_id"
COLLECTED = "collected"
CANCELLED = "cancelled"


@dataclass
class Job:
    """A run's job in flight."""

    request: RunRequest
    run_dir: Path
    job_id: str
    submitted_at: float
    adopted: bool = False
    started_seen: float | None = None
    extra: dict[str, float] = field(default_factory=dict)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def run_dir(jobs_dir: Path, run: int) -> Path:
    return jobs_dir / f"run-{run}"


def retire(rd: Path) -> None:
    """Move a finished attempt's directory aside (``run-N.1``, ``run-N.2``, ...)."""
    for k in range(1, 10_000):
        target = rd.with_name(f"{rd.name}.{k}")
        if not target.exists():
            rd.rename(target)
            return


def previous_job(rd: Path) -> tuple[str | None, bool]:
    """(job id of the attempt in ``rd``, whether that attempt is over); retires it if over."""
    if not rd.exists():
        return None, False
    if (rd / COLLECTED).exists() or (rd / CANCELLED).exists():
        retire(rd)
        return None, True
    jid = read_text(rd / JOB_ID).strip()
    return jid or None, False


def mark(rd: Path, marker: str) -> None:
    with contextlib.suppress(OSError):
        write_atomic(rd / marker, f"{time.time():.3f}\n")


def started_at(rd: Path) -> float | None:
    text = read_text(rd / "started").strip()
    try:
        return float(text) if text else None
    except ValueError:
        return None


def prepare_dir(rd: Path, script: str) -> Path:
    """A fresh run directory with its batch script; the script's path."""
    rd.mkdir(parents=True, exist_ok=True)
    os.chmod(rd, 0o755)
    path = rd / "job.sh"
    write_atomic(path, script)
    path.chmod(0o755)
    return path
