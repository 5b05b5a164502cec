"""Snakemake executor ``voirdire-slurm``: the Slurm executor, made safe for a first run.

Everything is the upstream ``snakemake-executor-plugin-slurm`` (its settings, submission,
accounting and status checks), with five changes, all in this module:

1. **Group jobs run side by side.** Upstream runs the jobs of a group job one at a time inside
   the allocation, each through its own ``srun`` and a fresh Snakemake process (``--executor
   slurm-jobstep --jobs 1``; snakemake/snakemake-executor-plugin-slurm#469, open). For
   voirdire's group of light per-dataset stages that made a cluster run of the DL19 test config
   4-5x slower than a laptop. Here a group job runs its jobs with Snakemake's local executor on
   the CPUs the group was given, as a group job did before Snakemake 8. Single jobs still go
   through ``srun`` exactly as upstream.
2. **No request larger than the largest node.** The partition's nodes are read once
   (``sinfo -N``). A job or group asking for more CPUs (``threads``) or memory (``mem_mb``)
   than the partition's largest node has is submitted with that node's size instead, with one
   log line, and the Snakemake inside the allocation is told that many cores and threads
   (upstream passes ``--cores all``, which counts the machine's CPUs, not the allocation's: on a
   node whose Slurm CPUs are fewer than its hardware threads the job's ``srun`` step asked for
   more than it was given and failed). Without ``--cores`` a group asks for the sum of its
   parallel jobs (7 CPUs and 14 GB for the DL19 light group), which no 2-CPU node can give:
   Slurm kept it pending forever (reason ``PartitionConfig``). An explicit ``cpus_per_task``
   larger than every node is not rewritten (the job's own ``srun`` would ask for it again); the
   job fails at submission, in one line.
3. **A job Slurm will never start fails within a minute.** A job pending for a reason waiting
   does not resolve (``PENDING_FOREVER``: ``PartitionConfig``, ``ReqNodeNotAvail``, ...) is
   cancelled and fails in one line naming the rule, what it asked for and the largest node. Its
   retry fails at once, without a second ``sbatch``.
4. **SIGTERM and Ctrl-C cancel the run's Slurm jobs and exit.** Snakemake's scheduler takes
   SIGTERM as "exit after the running jobs finish", which for a job pending forever is never;
   and upstream's status thread sleeps up to 180 s between checks, which ``shutdown`` waits
   for. Here SIGTERM is turned into the same path as Ctrl-C (``scancel`` of every job of this
   run, by its job name, then exit), and the status thread wakes within a second on shutdown.
5. **A short job is seen done soon after it ends.** Upstream waits 10 s longer at each status
   check that finds nothing finished (up to 180 s), so a job of 22 s was seen done 14 s late,
   and every job after it started that much later. Here the wait is also at most a quarter of
   the youngest running job's time since its submission (:data:`YOUNGEST_SHARE`, never below
   the first wait the settings give): a job is seen done at most about a quarter of its
   duration late. The waits grow by a factor instead of by 10 s: with the profile's first
   wait of 2 s, a job of 22 s is seen done after 9 checks instead of 3, one of an hour after
   43 instead of 30 (a check is a ``squeue`` or two).

Select it with ``executor: voirdire-slurm`` (``profiles/slurm``). The upstream flags keep their
meaning under this executor's prefix: ``--voirdire-slurm-no-account``,
``--voirdire-slurm-status-command``, and so on. See docs/clusters.md.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, replace

from snakemake_executor_plugin_slurm import Executor as SlurmExecutor
from snakemake_executor_plugin_slurm import ExecutorSettings, common_settings
from snakemake_interface_common.exceptions import WorkflowError
from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo
from snakemake_interface_executor_plugins.jobs import JobExecutorInterface
from snakemake_interface_executor_plugins.utils import format_cli_arg

__all__ = [
    "GROUP_EXECUTOR",
    "PENDING_FOREVER",
    "Executor",
    "ExecutorSettings",
    "Node",
    "common_settings",
    "next_check_s",
    "parse_nodes",
]

GROUP_EXECUTOR = "--executor local"
"""How the Snakemake inside a group job's allocation runs the group's jobs."""

PENDING_FOREVER = frozenset(
    {
        "PartitionConfig",  # asks for more than any node of the partition has
        "PartitionNodeLimit",
        "PartitionTimeLimit",
        "PartitionMaxNodes",
        "PartitionMinNodes",
        "BadConstraints",
        "ReqNodeNotAvail",  # the nodes it needs are down, drained or reserved
        "DependencyNeverSatisfied",
        "InvalidAccount",
        "InvalidQOS",
        "QOSMaxCpuPerJobLimit",
        "QOSMaxMemoryPerJob",
        "QOSMaxNodePerJobLimit",
        "QOSMaxWallDurationPerJobLimit",
        "AssocMaxCpuPerJobLimit",
        "AssocMaxMemPerJob",
        "AssocMaxNodePerJobLimit",
        "AssocMaxWallDurationPerJobLimit",
    }
)
"""Reasons (``squeue -o %r``) for which Slurm keeps a job pending until someone intervenes."""

FIRST_MINUTE_CHECK_S = 10
"""Seconds between status checks while a job of this run is in its first 90 s of pending."""

YOUNGEST_SHARE = 0.25
"""The wait before the next status check is at most this share of the youngest running job's age."""

PREFIX = "voirdire-slurm:"


@dataclass(frozen=True)
class Node:
    """One node of a partition as ``sinfo -N`` lists it: CPUs and memory (MB)."""

    name: str
    cpus: int
    mem_mb: int


def parse_nodes(sinfo: str) -> tuple[dict[str, list[Node]], str | None]:
    """``sinfo -h -N -o "%N|%P|%c|%m"`` → ({partition: nodes}, default partition or None)."""
    partitions: dict[str, list[Node]] = {}
    default = None
    for line in sinfo.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 4:
            continue
        name, partition, cpus, mem = fields
        if partition.endswith("*"):
            partition = default = partition[:-1]
        try:
            node = Node(name, int(cpus.rstrip("+")), int(mem.rstrip("+")))
        except ValueError:
            continue
        if node not in partitions.setdefault(partition, []):
            partitions[partition].append(node)
    return partitions, default


def next_check_s(planned_s: float, first_wait_s: float, ages_s: list[float]) -> float:
    """The wait before the next status check: upstream's ``planned_s``, but at most
    :data:`YOUNGEST_SHARE` of the youngest job's age (``ages_s``: seconds since each running
    job's submission), and never less than ``first_wait_s`` for that."""
    if not ages_s:
        return planned_s
    return min(planned_s, max(first_wait_s, YOUNGEST_SHARE * min(ages_s)))


def _cpus(n) -> str:
    return f"{n} CPU" if n == 1 else f"{n} CPUs"


def _what(job: JobExecutorInterface) -> str:
    """How a message names the job: ``rule x`` or ``group job light (rules a, b)``."""
    if job.is_group():
        return f"group job {job.groupid} (rules {', '.join(sorted(job.rules))})"
    return f"rule {job.name}"


class _AsSubmitted:
    """A job as ``sbatch`` sees it: its CPUs and memory capped at the largest node.

    The submission string is built from it, and the command the allocation runs takes its CPUs
    as ``--cores``; everything else (the job's registration and callbacks) gets the job itself.
    """

    def __init__(self, job: JobExecutorInterface, threads: int, resources) -> None:
        self.job = job
        self._threads = threads
        self._resources = resources

    def __getattr__(self, name):
        return getattr(self.job, name)

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def resources(self):
        return self._resources


def _unwrap(job):
    return job.job if isinstance(job, _AsSubmitted) else job


class Executor(SlurmExecutor):
    """Upstream's Slurm executor with the five changes in the module docstring."""

    def __post_init__(self, test_mode: bool = False):
        super().__post_init__(test_mode=test_mode)
        self._nodes: tuple[dict[str, list[Node]], str | None] | None = None
        self._asked: dict[str, tuple[tuple, str]] = {}  # Slurm job id -> (retry key, what it asked)
        self._pending_since: dict[str, float] = {}
        self._submitted_at: dict[str, float] = {}  # Slurm job id -> time.monotonic() of its sbatch
        self._hopeless: dict[tuple, str] = {}  # (rule or group, request) -> the one-line error
        self._capped_logged: set[str] = set()
        self._sigterm_taken = False
        self._exec_cores = threading.local()  # format_job_exec -> cores, per submitting thread
        self._terminating = False

    # -- 1. group jobs side by side -----------------------------------------------------------

    def format_job_exec(self, job: JobExecutorInterface) -> str:
        # The allocation's Snakemake gets --cores = the CPUs asked for, when that is not the rule's
        # own threads: a capped job, and every group job (whose local executor would otherwise
        # run as many jobs side by side as the machine has CPUs). Submissions run in a thread
        # pool, so the value is per thread; upstream reads it through the `cores` property.
        capped = isinstance(job, _AsSubmitted)
        self._exec_cores.value = job.threads if capped or job.is_group() else None
        try:
            command = super().format_job_exec(_unwrap(job))
        finally:
            self._exec_cores.value = None
        if not job.is_group():
            if capped:  # and its threads, through every nested Snakemake
                # (the job step's own Snakemake runs with --cores all); last, so a user's
                # --set-threads, passed on in the general arguments, cannot undo the cap
                command += " " + format_cli_arg("--set-threads", f"{job.rule.name}={job.threads}")
            return command
        jobstep = self.additional_general_args()
        if jobstep not in command:  # upstream changed how it runs jobs: fail loudly, not slowly
            raise RuntimeError(
                f"voirdire-slurm: the Slurm executor no longer runs jobs with {jobstep!r}; "
                "update src/snakemake_executor_plugin_voirdire_slurm or use `executor: slurm`"
            )
        return command.replace(jobstep, GROUP_EXECUTOR, 1)

    @property
    def cores(self):
        """``--cores`` of the command an allocation runs (upstream: the run's --cores or "all")."""
        value = getattr(self._exec_cores, "value", None)
        return super().cores if value is None else value

    # -- 2. requests capped at the largest node -----------------------------------------------

    def partition_nodes(self) -> tuple[dict[str, list[Node]], str | None]:
        """The nodes of every partition and the default partition, read once from ``sinfo``."""
        if self._nodes is None:
            try:
                out = subprocess.run(
                    ["sinfo", "-h", "-N", "-o", "%N|%P|%c|%m"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=True,
                ).stdout
            except (OSError, subprocess.SubprocessError) as error:
                self.logger.warning(f"{PREFIX} could not read the nodes with sinfo ({error}); requests are not capped")
                out = ""
            self._nodes = parse_nodes(out)
        return self._nodes

    def _nodes_for(self, partition_arg: str) -> tuple[str, list[Node]]:
        """(partition name(s), their nodes) for the ``-p`` argument upstream chose ('' = default)."""
        partitions, default = self.partition_nodes()
        words = shlex.split(partition_arg or "")
        names = words[1].split(",") if len(words) >= 2 and words[0] == "-p" else [default] if default else []
        nodes = [node for name in names for node in partitions.get(name, [])]
        return ",".join(names), nodes

    def run_job(self, job: JobExecutorInterface):
        try:
            submitted = self._capped(job)
        except WorkflowError as error:  # cannot fit any node: fail now, in one line
            line = str(error)
            self.logger.error(line)
            self._report_job_error_threadsafe(SubmittedJobInfo(job), f"{line}. ")
            return
        except Exception as error:  # e.g. a cpus_per_task that is no number: upstream says so
            self.logger.debug(f"{PREFIX} not capping {job}: {error!r}")
            submitted = job
        super().run_job(submitted)

    def _request(self, job) -> tuple[int | None, int | None, object]:
        """(CPUs, memory MB, runtime) that upstream's sbatch line asks for."""
        resources = job.resources
        if resources.get("cpus_per_task"):
            cpus = resources.cpus_per_task if resources.cpus_per_task > 0 else None
        else:
            cpus = job.threads
        if resources.get("mem_mb_per_cpu") and cpus:
            mem = resources.mem_mb_per_cpu * cpus
        else:
            mem = resources.get("mem_mb") or None
        return cpus, mem, resources.get("runtime")

    def _capped(self, job: JobExecutorInterface):
        """The job, or a view of it capped at the largest node (one log line per rule/group)."""
        resources = job.resources
        key = (job.name, self._request(job))
        if key in self._hopeless:  # its first try was pending forever: a retry would be too
            raise WorkflowError(self._hopeless[key])
        if resources.get("mpi") or (resources.get("nodes") or 1) > 1 or (resources.get("tasks") or 1) > 1:
            return job  # multi-task or multi-node: the per-node arithmetic below does not apply
        partition, nodes = self._nodes_for(self.get_partition_arg(job))
        if not nodes:
            return job
        largest = max(nodes, key=lambda node: (node.cpus, node.mem_mb))
        max_cpus = max(node.cpus for node in nodes)
        max_mem = max(node.mem_mb for node in nodes)
        cpus, mem, _ = self._request(job)
        if resources.get("cpus_per_task") and cpus and cpus > max_cpus:
            raise WorkflowError(
                f"{PREFIX} {_what(job)} asks for cpus_per_task={cpus}, but the largest node of "
                f"partition {partition} ({largest.name}) has {largest.cpus} CPUs and "
                f"{largest.mem_mb} MB; lower cpus_per_task (or use threads, which are capped)"
            )
        new_cpus = min(cpus, max_cpus) if cpus else cpus
        new_mem = min(mem, max_mem) if mem else mem
        if (new_cpus, new_mem) == (cpus, mem):
            return job
        values = dict(resources.items())
        if job.is_group() or "_cores" in values:
            values["_cores"] = new_cpus
        if resources.get("mem_mb_per_cpu") and new_mem:
            values["mem_mb_per_cpu"] = max(1, new_mem // new_cpus)
        elif new_mem:
            values["mem_mb"] = new_mem
        if job.name not in self._capped_logged:
            self._capped_logged.add(job.name)
            self.logger.warning(
                f"{PREFIX} {_what(job)} asks for {cpus} CPUs and {mem} MB, more than the largest "
                f"node of partition {partition} ({largest.name}: {max_cpus} CPUs, {max_mem} MB): "
                f"submitted with {new_cpus} CPUs and {new_mem} MB"
            )
        return _AsSubmitted(job, new_cpus, type(resources)(fromdict=values))

    def _report_job_submission_threadsafe(self, job_info: SubmittedJobInfo):
        job = _unwrap(job_info.job)
        self._submitted_at[job_info.external_jobid] = time.monotonic()
        try:  # what it asked for, for the one line if Slurm never starts it
            self._asked[job_info.external_jobid] = self._describe(job_info.job)
        except Exception as error:  # the job is submitted: it must be reported as such
            self.logger.debug(f"{PREFIX} {error!r}")
        super()._report_job_submission_threadsafe(replace(job_info, job=job))

    def _describe(self, submitted) -> tuple[tuple, str]:
        """(retry key, "rule x asks for ..., and the largest node ... has ...") of a submission."""
        job = _unwrap(submitted)
        cpus, mem, runtime = self._request(submitted)
        partition, nodes = self._nodes_for(self.get_partition_arg(job))
        tasks = submitted.resources.get("tasks") or 1
        asked = f"{tasks} tasks of {_cpus(cpus)}" if tasks > 1 else _cpus(cpus)
        asked += f", {mem} MB and {runtime} min" if runtime else f" and {mem} MB"
        if nodes:
            largest = max(nodes, key=lambda node: (node.cpus, node.mem_mb))
            where = f"the largest node of partition {partition} ({largest.name}) has {_cpus(largest.cpus)} and {largest.mem_mb} MB"
        else:
            where = "sinfo listed no node for its partition"
        key = (job.name, self._request(job))  # the job's own request, as _capped sees it on a retry
        return key, f"{_what(job)} asks for {asked}, and {where}"

    def _report_job_error_threadsafe(self, job_info: SubmittedJobInfo, msg: str):
        super()._report_job_error_threadsafe(replace(job_info, job=_unwrap(job_info.job)), msg)

    # -- 3. pending forever fails within a minute ---------------------------------------------

    def _queue(self) -> dict[str, tuple[str, str]]:
        """This run's jobs in the queue: {Slurm job id: (state, reason)}."""
        try:
            out = subprocess.run(
                ["squeue", "-h", f"--name={self.run_uuid}", "-o", "%i|%T|%r"],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout
        except (OSError, subprocess.SubprocessError) as error:
            self.logger.debug(f"{PREFIX} squeue failed: {error}")
            return {}
        queue = {}
        for line in out.splitlines():
            fields = line.strip().split("|", 2)
            if len(fields) == 3:
                queue[fields[0]] = (fields[1], fields[2])
        return queue

    async def check_active_jobs(self, active_jobs: list[SubmittedJobInfo]):
        queue = self._queue() if active_jobs else {}
        rest = []
        now = time.monotonic()
        for job_info in active_jobs:
            state, reason = queue.get(job_info.external_jobid, ("", ""))
            if state == "PENDING":
                self._pending_since.setdefault(job_info.external_jobid, now)
            else:
                self._pending_since.pop(job_info.external_jobid, None)
            cause = reason.split(",")[0].strip()
            if state == "PENDING" and cause in PENDING_FOREVER:
                self._fail_pending_forever(job_info, reason)
            else:
                rest.append(job_info)
        running = []
        async for job_info in super().check_active_jobs(rest):
            running.append(job_info)
            yield job_info
        if any(now - self._pending_since.get(j.external_jobid, -1e9) < 90 for j in rest):
            self.next_seconds_between_status_checks = min(self.next_seconds_between_status_checks, FIRST_MINUTE_CHECK_S)
        # -- 5. the next check within a quarter of the youngest running job's age
        still = {j.external_jobid for j in running}
        for slurm_id in {j.external_jobid for j in rest} - still:  # done: forget it
            self._submitted_at.pop(slurm_id, None)
        ages = [now - self._submitted_at[i] for i in still if i in self._submitted_at]
        first_wait = getattr(self.workflow.executor_settings, "init_seconds_before_status_checks", None) or 40
        self.next_seconds_between_status_checks = next_check_s(
            self.next_seconds_between_status_checks, first_wait, ages
        )

    def _fail_pending_forever(self, job_info: SubmittedJobInfo, reason: str) -> None:
        slurm_id = job_info.external_jobid
        key, asked = self._asked.get(slurm_id, (None, f"{_what(job_info.job)} cannot be placed"))
        line = (
            f"{PREFIX} {asked}; Slurm keeps it pending ({reason}) and will never start it, "
            f"so Slurm job {slurm_id} was cancelled"
        )
        subprocess.run(["scancel", slurm_id], capture_output=True, timeout=60, check=False)
        self._pending_since.pop(slurm_id, None)
        if key is not None:
            self._hopeless[key] = line
        self.logger.error(line)
        self.report_job_error(job_info, msg=f"{line}. ")  # upstream appends "For further error details"

    # -- 4. SIGTERM and Ctrl-C: cancel and exit -----------------------------------------------

    def run_jobs(self, jobs: list[JobExecutorInterface]):
        self._take_sigterm()
        super().run_jobs(jobs)

    def _take_sigterm(self) -> None:
        """Make SIGTERM act as Ctrl-C (the scheduler installed "finish running jobs first")."""
        if self._sigterm_taken or threading.current_thread() is not threading.main_thread():
            return
        signal.signal(signal.SIGTERM, self._on_sigterm)
        self._sigterm_taken = True

    def _on_sigterm(self, signum, frame):
        if self._terminating:  # a second SIGTERM while cancelling: die as SIGTERM would
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        self._terminating = True
        self.logger.warning(f"{PREFIX} SIGTERM: cancelling this run's Slurm jobs and exiting")
        raise KeyboardInterrupt

    def cancel(self):
        # No sbatch may start after the scancel below: wait for the ones in flight, drop the rest.
        self._job_submission_executor.shutdown(wait=True, cancel_futures=True)
        super().cancel()  # cancel_jobs(active jobs), then shutdown

    def cancel_jobs(self, active_jobs: list[SubmittedJobInfo]):
        """scancel the active jobs, and every other job of this run by its job name.

        The name catches a job whose status check was in flight (upstream's status thread takes
        the jobs out of the active list while it checks them) or whose submission just returned.
        """
        try:
            super().cancel_jobs(active_jobs)
        except WorkflowError as error:
            self.logger.warning(f"{PREFIX} {error}")
        left = sorted(self._queue())
        subprocess.run(["scancel", f"--name={self.run_uuid}"], capture_output=True, timeout=60, check=False)
        ids = sorted({j.external_jobid for j in active_jobs if j.external_jobid} | set(left))
        if ids:
            self.logger.warning(f"{PREFIX} cancelled Slurm job(s) {', '.join(ids)} (scancel)")

    async def sleep(self):
        """Upstream's wait between status checks (up to 180 s), cut short by shutdown."""
        end = time.monotonic() + self.next_seconds_between_status_checks
        while self.wait and (left := end - time.monotonic()) > 0:
            await asyncio.sleep(min(left, 0.5))
