"""Snakemake executor ``voirdire-slurm``: the Slurm executor, with group jobs run side by side.

Everything is the upstream ``snakemake-executor-plugin-slurm`` (its settings, submission,
accounting and status checks), except one thing. Upstream runs the jobs of a group job one at
a time inside the allocation, each through its own ``srun`` and a fresh Snakemake process
(``--executor slurm-jobstep --jobs 1``; snakemake/snakemake-executor-plugin-slurm#469, open).
For voirdire's group of light per-dataset stages that made a cluster run of the DL19 test
config 4-5x slower than a laptop. Here a group job runs its jobs with Snakemake's local
executor on the CPUs the group was given (``--cores``), as a group job did before Snakemake 8.
Single jobs still go through ``srun`` exactly as upstream.

Select it with ``executor: voirdire-slurm`` (``profiles/slurm``). The upstream flags keep their
meaning under this executor's prefix: ``--voirdire-slurm-no-account``,
``--voirdire-slurm-status-command``, and so on. Remove this module (and use ``executor: slurm``)
once upstream runs group jobs in parallel.
"""

from __future__ import annotations

from snakemake_executor_plugin_slurm import Executor as SlurmExecutor
from snakemake_executor_plugin_slurm import ExecutorSettings, common_settings
from snakemake_interface_executor_plugins.jobs import JobExecutorInterface

__all__ = ["GROUP_EXECUTOR", "Executor", "ExecutorSettings", "common_settings"]

GROUP_EXECUTOR = "--executor local"
"""How the Snakemake inside a group job's allocation runs the group's jobs."""


class Executor(SlurmExecutor):
    """Upstream's Slurm executor; a group job's jobs run in parallel inside its allocation."""

    def format_job_exec(self, job: JobExecutorInterface) -> str:
        command = super().format_job_exec(job)
        if not job.is_group():
            return command
        jobstep = self.additional_general_args()
        if jobstep not in command:  # upstream changed how it runs jobs: fail loudly, not slowly
            raise RuntimeError(
                f"voirdire-slurm: the Slurm executor no longer runs jobs with {jobstep!r}; "
                "update src/snakemake_executor_plugin_voirdire_slurm or use `executor: slurm`"
            )
        return command.replace(jobstep, GROUP_EXECUTOR, 1)
