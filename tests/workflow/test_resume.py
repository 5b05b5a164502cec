"""A run killed anywhere resumes to the same tables.

The workflow runs the way a user runs it: Snakemake with its directory lock (no ``--nolock``)
and the workflow profile's ``rerun-incomplete``, in a private working directory, so that its
lock never meets the other workflow tests' runs (they share the repository root, ``--nolock``).
Snakemake and its jobs (one process group) are killed with SIGKILL at three moments drawn from
a seeded generator, one after the other in the same working directory:

1. while the LLM judge writes its store: after a drawn number of calls reached the loopback
   server (each answered after a small delay, so judging lasts seconds);
2. while an aggregate rule writes its tables: ``tables`` or ``audits`` (drawn), once a drawn
   number of its CSV and Markdown files are being or have been written;
3. while the ``verdict`` rule runs.

After each kill, before resuming: no process of the run is left, and nothing under results/ that
a later job could read is half-written: every file is either marked incomplete in Snakemake's
metadata (remade before any job reads it) or the uninterrupted run's (byte for byte; the judge's
summary and raw answers and the fingerprint but for their run history). Then the user's resume:
``snakemake --unlock`` and the same command (the last time through ``voirdire resume``). At the
end every table and audit (CSV and Markdown under results/, timings aside) is byte-identical
to the uninterrupted run's, and the LLM server was asked no question twice but those in flight
at kill 1.

``VOIRDIRE_RESUME_SEED=N`` replays other kill points (the draws are in each assertion's message).
"""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, keep_judges

from voirdire.cli import main

SEED = int(os.environ.get("VOIRDIRE_RESUME_SEED", "27"))
KEY_ENV = "VOIRDIRE_RESUME_TEST_KEY"
CONCURRENCY = 8
"""The LLM judge's calls in flight: at most this many answers are lost at a kill, and asked again."""
LATENCY_S = 0.04
"""The loopback judge's delay per call: judging lasts seconds, so kill 1 lands in it."""
JUDGE = "api-judge"
JUDGE_OUTPUTS = [f"results/demo/qrels/original/{JUDGE}.txt"] + [
    f"results/demo/judgments/original/{JUDGE}.{ext}" for ext in ("parquet", "summary.json")
]
STORE = f"results/demo/judgments/original/{JUDGE}.sqlite"
AGGREGATES = {
    "tables": [
        f"results/tables/original/{name}.{ext}"
        for name in ("datasets", "table1", "table2", "recorded_runs", "significance")
        for ext in ("csv", "md")
    ],
    "audits": [
        f"results/audits/original/{name}.{ext}"
        for name in (
            "label_test",
            "lojo",
            "lojo_labels",
            "self_preference",
            "length",
            "length_systems",
            "drift",
            "control_chart",
            "circularity",
            "calibration",
        )
        for ext in ("csv", "md")
    ],
}
"""Each aggregate rule's tables, in the order it writes them."""
LOGS = {
    "tables": "results/logs/original/tables.log",
    "audits": "results/logs/original/audits.log",
    "verdict": "results/logs/verdict.log",
}
VERDICT = [f"results/verdict.{ext}" for ext in ("csv", "md", "html", "fragment.html")]

SUMMARY_RUN = {"calls_this_run", "requests_this_run", "resent_this_run", "cached", "wall_s"}
RUN_HISTORY = {
    f"results/demo/judgments/original/{JUDGE}.summary.json": SUMMARY_RUN,
    f"results/demo/judgments/original/{JUDGE}.parquet": {"latency_s", "created"},
    "results/tables/original/fingerprint.json": {"created"},
}
"""What differs from run to run by design: the judge's summary and raw answers say what this run
asked, what the store answered and how long calls took (after a resume too; no table shows it);
the fingerprint says when it was made."""


def config(url: str) -> dict:
    """The demo config without SmolLM2 (its rankers, judge, assistants, probes and gaming) or
    MiniLM (a model load per job: the runs take a third of the time without it): an API judge at
    the loopback server instead, beside the second assessor (a recorded judge), three oracles
    beside BM25. No baselines or jury (three jobs a run that no kill is drawn in), no rerun of the
    assessor (the drift audit's intervals: seconds of the audits job a run), Table 2's intervals
    on the fewest resamples: every table and audit is still written, and compared.
    Input paths absolute (the working directory is private); results relative, so the two runs'
    tables name the same paths."""
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    for section in ("assistants", "rewriting", "probes", "gaming", "variants"):
        config.pop(section, None)
    config["rankers"] = {}
    config["systems"] = ["BM25", "Perfect", "Swap[1]", "Swap[2,3]"]
    judges = keep_judges(config, lambda judge: judge["kind"] == "recorded")["judges"]
    for judge in judges:
        judge["qrels"] = str(ROOT / judge["qrels"])
        judge.pop("reruns", None)
    config["evaluation"]["resamples"] = 100
    config["judges"] = [
        {
            "name": JUDGE,
            "kind": "llm",
            "model": "openai/loopback",
            "api_base": url,
            "api_key_env": KEY_ENV,
            "concurrency": CONCURRENCY,
        },
        *judges,
    ]
    for dataset in config["datasets"].values():
        for key in ("topics", "qrels", "corpus"):
            dataset[key] = str(ROOT / dataset[key])
    config["results"] = "results"
    return config


ARGS = ["--snakefile", str(ROOT / "Snakefile"), "--configfile", "config.yaml", "--cores", "2"]
"""The user's arguments, in the run's working directory (no --nolock)."""


def snakemake(*extra: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", *ARGS, *extra]


KILLED_KEY, UNINTERRUPTED_KEY = "sk-resume-killed", "sk-resume-uninterrupted"
"""The two runs' API keys: the server tells their calls apart by them (the key is in no config)."""


def environment(key: str = KILLED_KEY) -> dict[str, str]:
    return {**os.environ, KEY_ENV: key}


def calls_of(server, key: str = KILLED_KEY) -> list:
    return [entry for entry in list(server.log) if entry.authorization == f"Bearer {key}"]


def run(folder: Path, command: list[str]) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=folder, env=environment(), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def workdir(tmp_path_factory, name: str, url: str) -> Path:
    folder = tmp_path_factory.mktemp(name)
    (folder / "config.yaml").write_text(yaml.safe_dump(config(url)))
    return folder


def pairs(folder: Path) -> int:
    return len((folder / "results/demo/pairs/original.tsv").read_text().splitlines()) - 1


@pytest.fixture(scope="module")
def server():
    from support.loopback import LoopbackServer

    with LoopbackServer(latency_s=LATENCY_S) as server:
        yield server


class Uninterrupted:
    """The uninterrupted run, started in the background (beside the killed run's first part:
    two cores, and neither run keeps both busy); ``folder()`` waits for it to end."""

    def __init__(self, folder: Path, server) -> None:
        self.path, self.server, self.out = folder, server, folder / "snakemake.out"
        with self.out.open("w") as fh:
            self.proc = subprocess.Popen(
                snakemake(),
                cwd=folder,
                env=environment(UNINTERRUPTED_KEY),
                stdout=fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def folder(self) -> Path:
        if self.proc.returncode is None:
            code = self.proc.wait(timeout=900)
            assert code == 0, f"the uninterrupted run failed:\n{self.out.read_text()[-5000:]}"
            assert "workflow specific profile" in self.out.read_text()  # profiles/default: rerun-incomplete
            assert len(calls_of(self.server, UNINTERRUPTED_KEY)) == pairs(self.path)  # one call per needed pair
        return self.path

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, server):
    """The uninterrupted run, once per module (the same server: the config, and so every
    table's fingerprint line, is the killed run's)."""
    background = Uninterrupted(workdir(tmp_path_factory, "uninterrupted", server.url), server)
    yield background
    background.stop()


# ----------------------------------------------------------------------------- killing


def group_alive(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def run_and_kill(folder: Path, trigger, what: str, timeout_s: float = 600) -> None:
    """Start the workflow in a process group of its own; when ``trigger()`` is True, SIGKILL the
    group (Snakemake and every job) and wait until none of it is left. ``trigger()`` is None
    while the moment is far (polled every 50 ms: the test takes little of the run's CPU), False
    once it is near (every 2 ms)."""
    out = folder / f"snakemake-{len(list(folder.glob('snakemake-*.out')))}.out"
    with out.open("w") as fh:
        proc = subprocess.Popen(
            snakemake(), cwd=folder, env=environment(), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + timeout_s
    try:
        while not (near := trigger()):
            if proc.poll() is not None:
                pytest.fail(f"the run ended (rc {proc.returncode}) before kill {what}:\n{out.read_text()[-5000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"kill {what} not reached in {timeout_s} s:\n{out.read_text()[-5000:]}")
            time.sleep(0.05 if near is None else 0.002)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not group_alive(proc.pid), f"processes of the run killed at {what} survive"


def begun(folder: Path, path: str) -> bool:
    """The file, or an atomic writer's temporary file of it, is there: its writing has begun."""
    target = folder / path
    return target.exists() or any(target.parent.glob(f".{target.name}.*.tmp"))


def when_writing(folder: Path, rule: str, outputs: list[str], count: int, delay_s: float):
    """A trigger: the rule's job runs (its log is there), ``count`` of ``outputs`` are being or
    have been written, and ``delay_s`` more seconds passed."""
    since: list[float] = []

    def trigger() -> bool | None:
        if not since:
            if not (folder / LOGS[rule]).exists():
                return None
            if sum(begun(folder, p) for p in outputs) < count:
                return False
            since.append(time.monotonic())
        return time.monotonic() - since[0] >= delay_s

    return trigger


# ----------------------------------------------------------------------------- checks


def incomplete(folder: Path) -> set[str]:
    """The outputs Snakemake's metadata marks incomplete: ``.snakemake/incomplete`` holds one file
    per output of a job that started and did not finish, named by the URL-safe base64 of its
    path (split into folders prefixed ``@`` when long)."""
    root = folder / ".snakemake/incomplete"
    marked = set()
    for path in root.rglob("*"):
        if path.is_file() and path.name != "migration_underway":
            parts = [p.removeprefix("@") for p in path.relative_to(root).parts]
            marked.add(base64.urlsafe_b64decode("".join(parts)).decode())
    return marked


def locked(folder: Path) -> bool:
    return any((folder / ".snakemake/locks").glob("*.lock"))


def same(rel: str, path: Path, twin: Path) -> bool:
    """The file is the uninterrupted run's, byte for byte, or but for its run history."""
    if rel not in RUN_HISTORY:
        return path.read_bytes() == twin.read_bytes()
    volatile = RUN_HISTORY[rel]
    if path.suffix == ".json":
        ours, theirs = ({k: v for k, v in json.loads(p.read_text()).items() if k not in volatile} for p in (path, twin))
        return ours == theirs
    return pd.read_parquet(path).drop(columns=list(volatile)).equals(pd.read_parquet(twin).drop(columns=list(volatile)))


def nothing_half_written(folder: Path, reference: Path, what: str) -> None:
    """After a kill, before resuming: every file under results/ that a job may read is either
    marked incomplete, so Snakemake remakes it before any job reads it, or the uninterrupted
    run's. Not compared: logs and benchmarks; the judge's SQLite store (its own transactions);
    the corpus check's memo and the index's lock; Lucene's files (renamed into place with their
    marker, the declared output, which is compared); atomic writers' temporary files cut short
    (``.NAME.XXXX.tmp``: no rule reads them)."""
    marked = incomplete(folder)
    problems = []
    for path in sorted((folder / "results").rglob("*")):
        rel = str(path.relative_to(folder))
        if (
            not path.is_file()
            or rel in marked
            or rel.startswith(("results/logs/", "results/.preflight/"))
            or ".sqlite" in path.name
            or path.name == ".index.lock"
            or (path.parent.name == "index" and path.name != "voirdire-index.json")
            or (path.name.startswith(".") and path.name.endswith(".tmp"))
        ):
            continue
        twin = reference / rel
        if not twin.is_file():
            problems.append(f"{rel}: not made by the uninterrupted run")
        elif not same(rel, path, twin):
            problems.append(f"{rel}: not the uninterrupted run's, and not marked incomplete")
    assert not problems, f"after kill {what}:\n" + "\n".join(problems)


def resume_by_hand(folder: Path) -> None:
    """What a user does after a killed run: remove the lock it left, run the same command again."""
    assert locked(folder), "a killed run keeps Snakemake's lock"
    run(folder, snakemake("--unlock"))
    assert not locked(folder)


def tables(folder: Path) -> dict[str, bytes]:
    """Every table and audit: the CSV and Markdown files under results/, timings aside."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in (folder / "results").rglob("*")
        if p.suffix in (".csv", ".md")
        and not str(p.relative_to(folder)).startswith("results/logs/")
        and p.name not in ("timings.csv", "timings.md")
    }


def stored_answers(folder: Path) -> int:
    with sqlite3.connect(folder / STORE) as db:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


# ----------------------------------------------------------------------------- the test


@pytest.mark.workflow
@pytest.mark.slow
def test_a_run_killed_anywhere_resumes_to_the_same_tables(tmp_path_factory, server, uninterrupted):
    rng = random.Random(SEED)
    folder = workdir(tmp_path_factory, "killed", server.url)

    # 1. mid-judging, after a drawn share of the calls
    share = rng.uniform(0.2, 0.8)
    judging = {}

    def mid_judging() -> bool | None:
        if "calls" not in judging:
            if not (folder / "results/demo/pairs/original.tsv").exists():  # written atomically
                return None
            judging["needed"] = pairs(folder)
            judging["calls"] = max(1, round(share * judging["needed"]))
        return len(calls_of(server)) >= judging["calls"]

    run_and_kill(folder, mid_judging, f"1 (seed {SEED}: after {share:.0%} of the calls)")
    needed, calls = judging["needed"], judging["calls"]
    what = f"1 (seed {SEED}: after {calls} of {needed} calls)"
    asked, kept = len(calls_of(server)), stored_answers(folder)
    assert calls <= asked < needed and set(JUDGE_OUTPUTS) <= incomplete(folder), f"{what}: not mid-judging"
    lost = asked - kept  # asked, and not in the store: they were in flight
    assert 0 <= lost <= CONCURRENCY, f"{what}: {lost} answers lost, more than the {CONCURRENCY} in flight"
    reference = uninterrupted.folder()
    assert pairs(reference) == needed
    nothing_half_written(folder, reference, what)
    resume_by_hand(folder)

    # 2. an aggregate rule writing its tables: which one, and after how many, drawn
    rule = rng.choice(sorted(AGGREGATES))
    count = rng.randint(0, len(AGGREGATES[rule]) // 2)
    delay = rng.uniform(0, 0.3) if count == 0 else 0.0
    what = f"2 (seed {SEED}: rule {rule}, {count} of its tables begun, +{delay:.2f} s)"
    run_and_kill(folder, when_writing(folder, rule, AGGREGATES[rule], count, delay), what)
    assert set(AGGREGATES[rule]) <= incomplete(folder), f"{what}: the kill landed after the rule finished"
    # the answers lost at kill 1 were asked again, and nothing else
    log = calls_of(server)
    repeated = [sha for sha, n in Counter(e.prompt_sha for e in log).items() if n > 1]
    assert len({e.prompt_sha for e in log}) == needed
    assert len(log) == needed + lost and len(repeated) == lost, f"{what}: {len(log)} calls, {lost} lost at kill 1"
    nothing_half_written(folder, reference, what)
    resume_by_hand(folder)

    # 3. the verdict
    count = rng.randint(0, 1)
    delay = rng.uniform(0, 0.5) if count == 0 else 0.0
    what = f"3 (seed {SEED}: rule verdict, {count} of its files begun, +{delay:.2f} s)"
    run_and_kill(folder, when_writing(folder, "verdict", VERDICT, count, delay), what)
    assert set(VERDICT) <= incomplete(folder), f"{what}: the kill landed after the rule finished"
    nothing_half_written(folder, reference, what)

    # the last resume as `voirdire resume`: it unlocks, and runs the same command again
    voirdire = Path(sys.executable).with_name("voirdire")
    result = run(folder, [str(voirdire), "resume", *ARGS])
    assert "removing Snakemake's lock" in result.stdout and "resuming" in result.stdout
    assert not incomplete(folder) and not locked(folder)
    assert len(calls_of(server)) == needed + lost  # no call after kill 1's resume
    ours, theirs = tables(folder), tables(reference)
    assert sorted(ours) == sorted(theirs) and len(theirs) >= 30
    assert not [path for path in theirs if ours[path] != theirs[path]], "not byte-identical to the uninterrupted run"
    again = run(folder, snakemake("-n"))
    assert "Nothing to be done" in again.stdout + again.stderr


# ----------------------------------------------------------------------------- voirdire resume, alone


def test_resume_refuses_while_a_job_of_the_run_lives(tmp_path, monkeypatch, capsys):
    """A job whose Snakemake was killed alone (``kill -9 PID``) still writes its outputs: no
    unlock, no second run beside it. A process elsewhere does not count."""
    (tmp_path / "run").mkdir()
    job = [sys.executable, "-c", "import time; time.sleep(60)", ".snakemake/scripts/tmpx1.llm_judge.py"]
    started = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: started.append(a) or subprocess.CompletedProcess(a, 0))
    with subprocess.Popen(job, cwd=tmp_path / "run") as orphan:
        try:
            monkeypatch.chdir(tmp_path / "run")
            assert main(["resume", "--cores", "1"]) == 1
            assert f"pid {orphan.pid}" in capsys.readouterr().err and started == []
            monkeypatch.chdir(tmp_path)  # the same run, named with --directory
            assert main(["resume", "--cores", "1", "--directory", "run"]) == 1 and started == []
            assert main(["resume", "--cores", "1"]) == 0  # nothing of a run lives in tmp_path itself
        finally:
            orphan.kill()
    unlock, again = (command[0] for command in started)
    assert unlock[-3:] == ["--unlock", "--cores", "1"] and again[-3:] == ["--rerun-incomplete", "--cores", "1"]
    assert unlock[:3] == again[:3] == [sys.executable, "-m", "snakemake"]


def test_a_torn_checkpoint_line_is_cut_before_the_next_record(tmp_path):
    """A reranking job killed mid-write leaves half a line; the next record must not continue it
    (that finished query would not parse, and a second resume would redo it)."""
    from voirdire.rankers.rerank import drop_torn_line, load_checkpoint

    checkpoint = tmp_path / "ckpt.jsonl"
    checkpoint.write_text('{"query_id": "q0", "ranking": []}\n{"query_id": "q1", "rank')
    drop_torn_line(checkpoint)
    with checkpoint.open("a") as fh:
        fh.write('{"query_id": "q2", "ranking": []}\n')
    assert set(load_checkpoint(checkpoint)) == {"q0", "q2"}
    checkpoint.write_text('{"query_id": "q0", "rank')  # torn first line: nothing kept
    drop_torn_line(checkpoint)
    assert checkpoint.read_text() == ""
