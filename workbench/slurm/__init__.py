"""The Slurm runner: each run of a campaign is a Slurm batch job (``executor: slurm``).

* ``runner``: ``SlurmRunner``, the ``nimo.runner.Runner`` contract on a cluster;
* ``job``: the assignment as sbatch options, the batch script and the per-node task wrapper;
* ``jobs``: each run's directory on shared storage, adopting the job of a previous life;
* ``outcome``: a finished job as a Sample or a failed run with Slurm's reason;
* ``commands``: sbatch, squeue, scontrol, scancel, sinfo (no slurmdbd: never sacct).

See ``docs/slurm.md``.
"""

from workbench.slurm.commands import SlurmCli, SlurmCommandError
from workbench.slurm.runner import SlurmRunner, open_slurm_runner

__all__ = ["SlurmCli", "SlurmCommandError", "SlurmRunner", "open_slurm_runner"]
