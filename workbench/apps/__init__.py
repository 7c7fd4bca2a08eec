"""Real applications shipped with the workbench, with their dataset generator.

Each app is a standard-library Python script copied to the compute host (``{app_dir}``) and
run on the dataset mounted from the storage host; ``gen_dataset.py`` is copied to the storage
host and generates the dataset there. ``APPS[name].application(size_mb)`` gives the inventory
``application:`` block for an app.

=========  =====================================================  ==========================
name       what it does                                           sensitive to
=========  =====================================================  ==========================
compress   LZMA (xz preset 1) of text files, ~10 MB/s per core    cpu_share
checksum   a digest of incompressible files read over the mount   rate_mbit, delay_ms;
           (``--algorithm``: sha1 ... sha3_256, a categorical knob) cpu_share with sha3_256
scan       4 passes over the files kept open (iterative analysis) memory_mb (page cache)
sort       external merge sort of 100-byte records                memory_mb (spills, passes)
pwork      parallel SHA-256 work items over TCP (Slurm job tasks)  nodes, cpu_share per node
=========  =====================================================  ==========================
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import InventoryError

APP_DIR = Path(__file__).resolve().parent
GENERATOR = "gen_dataset.py"
PROFILER = "dataset_profile.py"  # a dataset's profile, run on the storage host


@dataclass(frozen=True)
class AppSpec:
    """A shipped application: its script, argv template, dataset kind and default size."""

    name: str
    script: str
    args: tuple[str, ...]
    kind: str
    size_mb: float
    files: int
    summary: str

    def command(self) -> list[str]:
        return ["python3", "{app_dir}/" + self.script, "{dataset}", *self.args]

    def generate(self) -> list[str]:
        return ["python3", "{app_dir}/" + GENERATOR, "{dataset}", "--size-mb", "{size_mb}",
                "--files", str(self.files), "--kind", self.kind]

    def application(self, size_mb: float | None = None, timeout_s: float = 120) -> dict[str, Any]:
        """The inventory ``application:`` mapping for this app."""
        return {
            "name": self.name,
            "command": self.command(),
            "dataset": {"path": self.name, "size_mb": size_mb or self.size_mb,
                        "generate": self.generate()},
            "workdir": "/tmp",
            "timeout_s": timeout_s,
            "repeats": 1,
            "threads": 1,
        }


APPS: dict[str, AppSpec] = {
    a.name: a
    for a in (
        AppSpec("compress", "compress.py", ("--codec", "lzma", "--level", "1"), "text", 24, 6,
                "CPU-bound: LZMA compression of text"),
        AppSpec("checksum", "checksum.py", ("--threads", "{threads}"), "random", 48, 12,
                "I/O-bound: SHA-256 of files read over the mount"),
        AppSpec("scan", "scan.py", ("--passes", "4"), "random", 64, 8,
                "memory-sensitive: repeated passes served from the page cache when it fits"),
        AppSpec("sort", "sort.py", ("--workdir", "{workdir}"), "records", 64, 4,
                "memory-sensitive: external merge sort spilling below its working set"),
        AppSpec("pwork", "pwork.py", ("--work-mb", "1200", "--rendezvous", "{workdir}"),
                "random", 4, 4, "parallel (Slurm): TCP work queue, time falls with nodes"),
    )
}


def app(name: str) -> AppSpec:
    """The shipped app called ``name`` (InventoryError listing valid names otherwise)."""
    try:
        return APPS[name]
    except KeyError:
        raise InventoryError(f"unknown app {name!r}", hint="valid: " + ", ".join(APPS)) from None


def script_files() -> list[Path]:
    """Every script to copy to the hosts (apps, the generator and the profiler)."""
    return sorted({APP_DIR / a.script for a in APPS.values()}
                  | {APP_DIR / GENERATOR, APP_DIR / PROFILER})
