"""The Slurm profile on a real Slurm: the README's command, every job through sbatch, same bytes.

A single-node Slurm (slurmctld, slurmd and munge on 127.0.0.1, no accounting database) comes
from ``../shared/tools/slurm-single-node.sh``, which needs root and the Debian package registry
the first time. The DL19 test config runs through ``profiles/slurm`` with the command the README
gives, and its results are compared byte for byte with the local run of the same config.
Wall times are printed by ``bench/slurm_overhead.py``, not asserted here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

TOOL = ROOT.parent / "shared" / "tools" / "slurm-single-node.sh"
COMMAND = (
    "snakemake --workflow-profile profiles/slurm --configfile .test/config.yaml "
    "--cores 2 --voirdire-slurm-no-account"
)
"""The README's command for the DL19 test config on the single-node Slurm (checked below)."""

pytestmark = pytest.mark.workflow


def _slurm_answers() -> bool:
    if shutil.which("sinfo") is None:
        return False
    return subprocess.run(["sinfo"], capture_output=True, timeout=30, check=False).returncode == 0


@pytest.fixture(scope="module")
def slurm():
    """A running single-node Slurm: reuse one that answers, else start one (and stop it after)."""
    if _slurm_answers():
        yield
        return
    if not TOOL.is_file():
        pytest.skip(f"no Slurm here and {TOOL} is absent (../shared missing)")
    if os.geteuid() != 0:
        pytest.skip("no Slurm here, and starting one (slurmctld, slurmd, munge) needs root")
    if shutil.which("slurmctld") is None and shutil.which("apt-get") is None:
        pytest.skip("slurm-wlm is not installed and there is no apt-get to install it")
    started = subprocess.run(["bash", str(TOOL), "start"], capture_output=True, text=True, timeout=900, check=False)
    if started.returncode != 0 and shutil.which("slurmctld") is None:  # apt could not install it
        last = (started.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"slurm-wlm could not be installed from the Debian registry: {last}")
    assert started.returncode == 0, f"{TOOL} start failed:\n{started.stdout}\n{started.stderr}"
    try:
        yield
    finally:
        subprocess.run(["bash", str(TOOL), "stop"], capture_output=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def runs(slurm, dl19_results):
    """(local results, Slurm results, Snakemake's log): the Slurm run writes where the local one did.

    Same results path, so the configs (and their hashes in the fingerprint) are identical; the
    local results are moved aside meanwhile and put back afterwards for the other tests.
    """
    local = dl19_results.with_name(dl19_results.name + "-local")
    dl19_results.rename(local)
    try:
        args = COMMAND.split()[1:] + ["--config", f"results={dl19_results}"]
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        log = done.stdout + done.stderr
        assert done.returncode == 0, f"{COMMAND} failed:\n{log[-6000:]}"
        yield local, dl19_results, log
    finally:
        shutil.rmtree(dl19_results, ignore_errors=True)
        local.rename(dl19_results)


def submissions(log: str) -> tuple[dict[int, str], set[int], set[str], set[str]]:
    """From Snakemake's log: jobs {jobid: rule}, those submitted, local rules, Slurm job ids.

    A job is submitted when a line ``Job <jobid> has been submitted with SLURM jobid <n>`` names
    it, or when it is listed in a group job whose submission line follows.
    """
    jobs: dict[int, str] = {}
    submitted: set[int] = set()
    local_rules: set[str] = set()
    slurm_ids: set[str] = set()
    rule: tuple[bool, str] | None = None
    group: list[int] | None = None
    for line in log.splitlines():
        text = line.strip()
        if match := re.fullmatch(r"(local)?rule (\w+):", text):
            rule = (bool(match[1]), match[2])
        elif (match := re.fullmatch(r"jobid: (\d+)", text)) and rule is not None:
            is_local, name = rule
            if is_local:
                local_rules.add(name)
            else:
                jobs[int(match[1])] = name
                if group is not None:
                    group.append(int(match[1]))
            rule = None
        elif re.search(r"\bGroup job \w+ \(", text):  # "[date] Group job light (jobs ...):"
            group = []
        elif match := re.match(r"Job (\S+) has been submitted with SLURM jobid (\d+)", text):
            slurm_ids.add(match[2])
            if match[1].isdigit():
                submitted.add(int(match[1]))
            elif group is not None:
                submitted.update(group)
                group = None
    return jobs, submitted, local_rules, slurm_ids


def job_stats(log: str) -> dict[str, int]:
    """Snakemake's "Job stats" table: jobs per rule."""
    table = log.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE) if m[1] != "total"}


def test_the_readme_gives_the_command():
    assert COMMAND in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_job_but_all_went_through_sbatch(runs):
    _, _, log = runs
    jobs, submitted, local_rules, slurm_ids = submissions(log)
    stats = job_stats(log)
    assert local_rules == {"all"}  # the one job that runs on the submit host
    assert sum(stats.values()) - stats["all"] == len(jobs) > 20
    assert sorted(jobs.values()) == sorted(r for r, n in stats.items() if r != "all" for _ in range(n))
    assert submitted == set(jobs)
    assert slurm_ids  # and Slurm itself ran each submission to completion, exit code 0
    for slurm_id in slurm_ids:
        shown = subprocess.run(["scontrol", "show", "job", slurm_id], capture_output=True, text=True, check=False)
        assert "JobState=COMPLETED" in shown.stdout and "ExitCode=0:0" in shown.stdout, shown.stdout


def test_the_light_stages_are_one_submission(runs):
    _, _, log = runs
    jobs, _, _, slurm_ids = submissions(log)
    assert len(slurm_ids) == 1 and "Group job light" in log  # DL19 has no LLM job: one group
    assert {"dataset", "oracle", "evaluate", "tables", "audits"} <= set(jobs.values())


def _fingerprint(path: Path) -> dict:
    fingerprint = json.loads(path.read_text())
    fingerprint.pop("created")  # the one field that names the moment it was written
    return fingerprint


def test_results_are_byte_identical_to_the_local_run(runs):
    local, remote, _ = runs
    files = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(remote) for p in remote.rglob("*") if p.is_file())
    compared = [f for f in files if f.parts[0] != "logs"]  # logs name hosts, times and job ids
    assert {f.suffix for f in compared} >= {".csv", ".parquet", ".md", ".png", ".pdf", ".json"}
    for name in compared:
        if name.name == "fingerprint.json":
            assert _fingerprint(local / name) == _fingerprint(remote / name), name
        else:
            assert (local / name).read_bytes() == (remote / name).read_bytes(), name


def test_the_log_parser_sees_a_job_left_out():
    log = (
        "Job stats:\njob  count\n---  ---\ndataset  1\nall  1\ntotal  2\n\n"
        "rule dataset:\n    jobid: 1\nlocalrule all:\n    jobid: 0\n"
    )
    jobs, submitted, local_rules, _ = submissions(log)
    assert jobs == {1: "dataset"} and local_rules == {"all"}
    assert submitted != set(jobs)  # no submission line: the check above would fail
    grouped = log.replace("rule dataset:", "Group job light (jobs):\n    rule dataset:") + (
        "Job 9f3c has been submitted with SLURM jobid 7 (log: x).\n"
    )
    assert submissions(grouped)[1] == {1}
