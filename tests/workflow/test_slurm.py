"""The Slurm profile on a real Slurm: the README's command, every job through sbatch, same bytes.

A single-node Slurm (slurmctld, slurmd and munge on 127.0.0.1, no accounting database) comes
from ``../shared/tools/slurm-single-node.sh``, which needs root and the Debian package registry
the first time; the ``slurm`` fixture (tests/conftest.py) starts it for the tests that ask for
it. The DL19 test config runs through ``profiles/slurm`` with the command the README gives, and
its results (up to the tables and the audits) are compared byte for byte with the local run of the
same config.
Wall times are printed by ``bench/slurm_overhead.py``, not asserted here.

A newcomer's first run (docs/clusters.md): the same command without ``--cores`` runs (the light
group is capped at the node's CPUs), a job asking for more than the node has is capped or fails
in one line, a job Slurm would keep pending forever fails within a minute, and SIGTERM or Ctrl-C
cancels the run's Slurm jobs. Timeouts below only guard against a hang; no time is asserted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SHARED_DL19

COMMAND = (
    "snakemake --workflow-profile profiles/slurm --configfile .test/config.yaml --cores 2 --voirdire-slurm-no-account"
)
"""The README's command for the DL19 test config on the single-node Slurm (checked below)."""

pytestmark = pytest.mark.workflow


TARGETS = ("tables/original/fingerprint.json", "audits/original/lojo.csv")
"""What the Slurm run builds: the tables job and the audits job, so every light stage before them
(dataset, BM25, oracles, judges, scores, agreement). Figure 3, the ledger, the verdict and the
timings (four more jobs of the same group, and `all`) are left to the local run."""

RULES = {"dataset", "bm25", "oracles", "human_judge", "needed_pairs", "recorded_judges", "null_judge"}
RULES |= {"scores", "agreement", "tables", "audits"}
"""The rules of the jobs those targets need."""

LEFT_OUT = ("figures/", "verdict.", "tables/ledger.", "tables/timings.")
"""The local run's files the Slurm run does not build (the outputs of the jobs left out)."""


@pytest.fixture(scope="module")
def runs(slurm, dl19_results):
    """(local results, Slurm results, Snakemake's log): the Slurm run writes where the local one did.

    Same results path, so the configs (and their hashes in the fingerprint) are identical; the
    local results are moved aside meanwhile and put back afterwards for the other tests.
    """
    local = dl19_results.with_name(dl19_results.name + "-local")
    dl19_results.rename(local)
    try:
        targets = [str(dl19_results / target) for target in TARGETS]
        args = targets + COMMAND.split()[1:] + ["--config", f"results={dl19_results}"]
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
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


def test_every_job_went_through_sbatch(runs):
    _, _, log = runs
    jobs, submitted, local_rules, slurm_ids = submissions(log)
    stats = job_stats(log)
    assert not local_rules  # files named as targets: no `all` job, none on the submit host
    assert set(stats) == set(jobs.values()) == RULES  # every stage up to the tables and audits
    assert sum(stats.values()) == len(jobs) >= len(RULES) + 1  # the null judges: two jobs of one rule
    assert sorted(jobs.values()) == sorted(r for r, n in stats.items() for _ in range(n))
    assert submitted == set(jobs)
    assert slurm_ids  # and Slurm itself ran each submission to completion, exit code 0
    for slurm_id in slurm_ids:
        shown = subprocess.run(["scontrol", "show", "job", slurm_id], capture_output=True, text=True, check=False)
        assert "JobState=COMPLETED" in shown.stdout and "ExitCode=0:0" in shown.stdout, shown.stdout


def test_the_light_stages_are_one_submission(runs):
    _, _, log = runs
    jobs, _, _, slurm_ids = submissions(log)
    assert len(slurm_ids) == 1 and "Group job light" in log  # DL19 has no LLM job: one group
    assert {"dataset", "oracles", "scores", "tables", "audits"} <= set(jobs.values())


def _fingerprint(path: Path) -> dict:
    fingerprint = json.loads(path.read_text())
    fingerprint.pop("created")  # the one field that names the moment it was written
    return fingerprint


def test_results_are_byte_identical_to_the_local_run(runs):
    local, remote, _ = runs
    files = sorted(p.relative_to(remote) for p in remote.rglob("*") if p.is_file())
    built = [p.relative_to(local) for p in local.rglob("*") if p.is_file()]
    assert [f for f in files if f.parts[0] != "logs"] == sorted(
        f for f in built if f.parts[0] != "logs" and not f.as_posix().startswith(LEFT_OUT)
    )  # every file of the jobs it ran, nothing else
    assert {f for f in files if f.parts[0] == "logs"} < set(built)
    # logs name hosts, times and job ids
    compared = [f for f in files if f.parts[0] != "logs"]
    assert len(compared) >= 60 and {f.parts[0] for f in compared} == {"dl19", "tables", "audits", "manifest.json"}
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


# -- a newcomer's first run: nothing hangs -------------------------------------------------------

NO_CORES = COMMAND.replace(" --cores 2", "")
"""The README's command as a newcomer types it without ``--cores``."""

PROFILE = ["--workflow-profile", str(ROOT / "profiles" / "slurm"), "--voirdire-slurm-no-account"]
"""The README's profile, for the tiny workflows below (run in their own directory)."""


def _node_cpus() -> int:
    """CPUs of the largest node of the single-node Slurm."""
    out = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True, check=True).stdout
    return max(int(word.rstrip("+")) for word in out.split())


def _run_id(log: str) -> str | None:
    match = re.search(r"SLURM run ID: (\S+)", log)
    return match[1] if match else None


def _queued(run_id: str | None) -> list[str]:
    """Jobs of that Snakemake run still in Slurm's queue (pending, running or completing)."""
    if run_id is None:
        return []
    out = subprocess.run(["squeue", "-h", f"--name={run_id}", "-o", "%i %T"], capture_output=True, text=True)
    return out.stdout.split("\n")[:-1]


def _snakemake(args: list[str], cwd: Path, timeout: int) -> tuple[int, str]:
    """(exit code, log) of a Snakemake run; a run still going at ``timeout`` is a hang: its Slurm
    jobs are cancelled and the test fails with the end of its log."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as hung:
        log = (hung.stdout or b"").decode() + (hung.stderr or b"").decode()
        if run_id := _run_id(log):
            subprocess.run(["scancel", f"--name={run_id}"], check=False)
        pytest.fail(f"snakemake {' '.join(args)} still running after {timeout} s (a hang):\n{log[-3000:]}")
    return done.returncode, done.stdout + done.stderr


def _error_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("voirdire-slurm:") and "asks for" in line]


@pytest.mark.skipif(not (SHARED_DL19 / "qrels.nist.txt").is_file(), reason="real TREC DL 2019 data absent")
def test_the_readme_profile_without_cores_runs(slurm, tmp_path):
    """Without ``--cores`` the light group asked for 7 CPUs and 14 GB and stayed pending forever.

    Now it is submitted with what the node has and the run completes; had it still been
    unplaceable, it would have failed in one line (asserted below to be absent) instead.
    """
    cpus = _node_cpus()
    # the judges' labels and what they need: the light group's first stages, ending in three
    # judges' jobs side by side (the runs fixture runs the later stages, the jobs are alike)
    qrels = tmp_path / "results" / "dl19" / "qrels" / "original"
    labels = [qrels / f"{judge}.txt" for judge in ("human", "monot5-3b", "length", "overlap")]
    args = [*map(str, labels), *NO_CORES.split()[1:], "--config", f"results={tmp_path / 'results'}"]
    code, log = _snakemake(args, ROOT, timeout=600)
    assert not [line for line in log.splitlines() if "will never start" in line]  # it did not fail fast
    assert code == 0, f"{NO_CORES} failed:\n{log[-6000:]}"
    capped = [line for line in log.splitlines() if line.startswith("voirdire-slurm: group job light")]
    assert len(capped) == 1, log[-6000:]  # one line says so
    assert f"submitted with {cpus} CPUs" in capped[0] and "largest node of partition" in capped[0]
    asked = int(re.search(r"asks for (\d+) CPUs", capped[0])[1])
    assert asked > cpus  # the request was larger than the node (the group sums its parallel jobs)
    _, _, _, slurm_ids = submissions(log)
    for slurm_id in slurm_ids:  # and Slurm ran every submission, none asking for more than the node
        shown = subprocess.run(["scontrol", "show", "job", slurm_id], capture_output=True, text=True).stdout
        assert "JobState=COMPLETED" in shown, shown
        assert int(re.search(r"NumCPUs=(\d+)", shown)[1]) <= cpus, shown
    assert all(path.is_file() for path in labels)


TOO_BIG = """\
localrules: all

rule all:
    input: "capped.txt", "explicit.txt", "wide.txt"

rule capped:  # threads beyond the node: submitted with the node's CPUs
    output: "capped.txt"
    threads: 64
    shell: "echo {threads} > {output}"

rule explicit:  # an explicit cpus_per_task beyond the node: fails at submission
    output: "explicit.txt"
    resources: cpus_per_task=64
    shell: "touch {output}"

rule wide:  # 8 tasks on a 2-CPU node: accepted by sbatch, then pending forever (PartitionConfig)
    output: "wide.txt"
    resources: tasks=8
    shell: "touch {output}"
"""


@pytest.fixture(scope="module")
def too_big(slurm, tmp_path_factory):
    """(exit code, log, directory) of a tiny workflow whose jobs ask for more than the node."""
    path = tmp_path_factory.mktemp("too-big")
    (path / "Snakefile").write_text(TOO_BIG)
    code, log = _snakemake(PROFILE + ["--keep-going", "--verbose"], path, timeout=300)  # verbose: sbatch calls
    return code, log, path


def test_threads_beyond_the_node_are_capped(too_big):
    code, log, path = too_big
    cpus = _node_cpus()
    assert code != 0  # the two jobs below failed; this one ran
    capped = [line for line in _error_lines(log) if "rule capped " in line]
    assert len(capped) == 1, log[-4000:]
    assert "rule capped asks for 64 CPUs and 2000 MB" in capped[0]
    assert f"submitted with {cpus} CPUs" in capped[0]
    assert (path / "capped.txt").read_text().strip() == str(cpus)  # it ran on the CPUs it was given
    # and the Snakemake inside the allocation was told so: upstream's `--cores all` counts the
    # machine's CPUs, and on a node with fewer Slurm CPUs than hardware threads the job step
    # asked for more than the allocation (srun: "More processors requested than permitted")
    calls = [line for line in log.splitlines() if line.startswith("sbatch call:") and "rule_capped" in line]
    assert calls, log[-4000:]
    for call in calls:
        assert f"--cpus-per-task={cpus} " in call and f"--cores {cpus} " in call, call
        assert call.rstrip('"').endswith(f"--set-threads 'capped={cpus}'"), call


def test_an_explicit_cpus_per_task_beyond_the_node_fails_in_one_line(too_big):
    _, log, path = too_big
    lines = [line for line in _error_lines(log) if "rule explicit " in line]
    assert len(set(lines)) == 1, log[-4000:]  # one line per try (the profile says retries: 1)
    assert "cpus_per_task=64" in lines[0] and "largest node of partition" in lines[0]
    jobs, submitted, _, _ = submissions(log)
    assert "explicit" in jobs.values() and "capped" in jobs.values()
    assert {rule for jobid, rule in jobs.items() if jobid in submitted} == {"capped", "wide"}  # not sbatch'ed
    assert not (path / "explicit.txt").exists()


def test_a_job_pending_forever_fails_in_one_line_and_is_cancelled(too_big):
    _, log, path = too_big
    cpus = _node_cpus()
    lines = [line for line in _error_lines(log) if "rule wide " in line]
    assert lines, log[-4000:]
    line = lines[0]
    assert "rule wide asks for 8 tasks of 1 CPU, 2000 MB and 10 min" in line
    assert f"has {cpus} CPU" in line and "(PartitionConfig)" in line and "will never start" in line
    slurm_id = re.search(r"Slurm job (\d+) was cancelled", line)[1]
    shown = subprocess.run(["scontrol", "show", "job", slurm_id], capture_output=True, text=True).stdout
    assert "JobState=CANCELLED" in shown, shown
    # its retry (the profile says retries: 1) fails at once, without a second sbatch
    assert len(re.findall(r"Job \d+ has been submitted with SLURM jobid", log)) == 2  # capped + wide
    assert len(lines) == 2 and lines[1] == line
    assert not _queued(_run_id(log))


SLEEPY = """\
rule sleepy:
    output: "slept.txt"
    shell: "sleep 120 && touch {output}"
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_signal_cancels_the_slurm_jobs_and_exits(slurm, tmp_path, sig):
    (tmp_path / "Snakefile").write_text(SLEEPY)
    log_path = tmp_path / "snakemake.log"
    with log_path.open("w") as log_file:
        run = subprocess.Popen(
            [sys.executable, "-m", "snakemake", *PROFILE],
            cwd=tmp_path,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
        )
        try:
            slurm_id = None
            deadline = time.monotonic() + 120
            while slurm_id is None and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
                if match := re.search(r"submitted with SLURM jobid (\d+)", log_path.read_text()):
                    slurm_id = match[1]
            assert slurm_id, log_path.read_text()
            while "RUNNING" not in " ".join(_queued(_run_id(log_path.read_text()))) and time.monotonic() < deadline:
                time.sleep(0.5)
            run.send_signal(sig)
            try:
                run.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"{sig.name}: snakemake still running 30 s later:\n{log_path.read_text()[-3000:]}")
        finally:
            if run.poll() is None:  # the test failed: leave no process and no Slurm job behind
                run.kill()
                run.wait()
                if run_id := _run_id(log_path.read_text()):
                    subprocess.run(["scancel", f"--name={run_id}"], check=False)
    log = log_path.read_text()
    assert run.returncode != 0, log[-3000:]
    # nothing of the run is pending or running once Snakemake has exited; a cancelled job then
    # passes through COMPLETING while slurmd kills its step, which on a loaded machine takes
    # up to Slurm's KillWait (30 s) and more: wait for that, never for a job still alive
    assert not [job for job in _queued(_run_id(log)) if not job.endswith(" COMPLETING")], log[-3000:]
    deadline = time.monotonic() + 120
    while _queued(_run_id(log)) and time.monotonic() < deadline:
        time.sleep(1)
    assert not _queued(_run_id(log)), log[-3000:]
    shown = subprocess.run(["scontrol", "show", "job", slurm_id], capture_output=True, text=True).stdout
    assert "JobState=CANCELLED" in shown, shown
    assert f"voirdire-slurm: cancelled Slurm job(s) {slurm_id} (scancel)" in log
    assert not (tmp_path / "slept.txt").exists()


# -- who starts and stops the single-node Slurm (no Slurm needed) ---------------------------------


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """tests/support/slurm.py with its state under tmp_path and a fake tool: a dict says whether
    a controller answers, and counts starts and stops."""
    from support import slurm as single_node

    fake = {"up": False, "starts": 0, "stops": 0}

    def start():
        fake.update(up=True, starts=fake["starts"] + 1)
        return subprocess.CompletedProcess(["start"], 0, "", "")

    def stop():
        fake.update(up=False, stops=fake["stops"] + 1)

    monkeypatch.setattr(single_node, "STATE", tmp_path / "state")
    monkeypatch.setattr(single_node, "answers", lambda: fake["up"])
    monkeypatch.setattr(single_node, "start", start)
    monkeypatch.setattr(single_node, "stop", stop)
    monkeypatch.setenv(single_node.REAL_CONF, "")
    monkeypatch.setenv("SLURM_CONF", os.devnull)
    return single_node, fake


def _other_holder(single_node) -> subprocess.Popen:
    """A live process registered as a holder (another xdist worker or pytest session)."""
    other = subprocess.Popen(["sleep", "60"])
    (single_node.STATE / "holders").mkdir(parents=True, exist_ok=True)
    (single_node.STATE / "holders" / str(other.pid)).touch()
    return other


def test_the_first_holder_starts_slurm_and_the_last_one_stops_it(fake_slurm):
    single_node, fake = fake_slurm
    assert single_node.hold() is None
    assert fake == {"up": True, "starts": 1, "stops": 0}
    assert "SLURM_CONF" not in os.environ  # the session's own (none), for the Slurm tests' commands
    other = _other_holder(single_node)
    try:
        assert single_node.release() is False  # another holder still uses it
        assert fake["up"] and os.environ["SLURM_CONF"] == os.devnull
        assert single_node.hold() is None and fake["starts"] == 1  # it answers: not started again
    finally:
        other.kill()
        other.wait()
    assert single_node.release() is True  # the other one died: this was the last holder
    assert fake == {"up": False, "starts": 1, "stops": 1}
    assert not (single_node.STATE / "started").exists()


def test_a_slurm_the_tests_did_not_start_is_left_running(fake_slurm):
    single_node, fake = fake_slurm
    fake["up"] = True  # someone's own Slurm
    assert single_node.hold() is None and single_node.release() is False
    assert fake == {"up": True, "starts": 0, "stops": 0}


def test_a_failed_start_holds_nothing(fake_slurm, monkeypatch):
    single_node, fake = fake_slurm
    monkeypatch.setattr(single_node, "start", lambda: subprocess.CompletedProcess(["start"], 1, "", "no munge"))
    failed = single_node.hold()
    assert failed is not None and failed.stderr == "no munge"
    assert os.environ["SLURM_CONF"] == os.devnull  # still masked
    with single_node._locked():
        assert single_node.holders() == []
