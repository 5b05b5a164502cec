"""The job host (voirdire.jobhost): a job's script run by a copy of the host gives what the job gives
alone -- its output on the job's own streams, its exit status, its directory, environment, argv and
temporary folder; a killed job ends its copy; the host holds no thread when it forks and never torch,
litellm or Java; a host killed with copies still running is replaced; the host is keyed by what its
imports read and nothing else. Real processes throughout, each test with a host folder of its own."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import LAUNCH_SNAKEMAKE

from voirdire import jobhost

SCRIPT = textwrap.dedent(
    """
    import sys, types
    snakemake = types.SimpleNamespace(threads=int(sys.argv[3]), rule="probe")
    from voirdire.jobhost import hand_over
    hand_over(snakemake)

    import json, os, tempfile, time
    from pathlib import Path
    from voirdire import jobhost
    mode, out = sys.argv[1], Path(sys.argv[2])
    print("to the job's stdout", flush=True)
    print("to the job's stderr", file=sys.stderr, flush=True)
    facts = {"pid": os.getpid(), "ppid": os.getppid(), "copy": jobhost.in_copy(), "cwd": os.getcwd(),
             "env": os.environ.get("ONLY_THIS_JOB"), "argv": sys.argv[1:], "tmp": tempfile.gettempdir(),
             "why": os.environ.get(jobhost.WHY_ENV), "modules": sorted(m for m in jobhost.NEVER if m in sys.modules),
             "comm": Path("/proc/self/comm").read_text().strip()}
    out.write_text(json.dumps(facts))
    if mode == "raise":
        raise ValueError("a planted failure")
    if mode == "sleep":
        time.sleep(60)
        out.with_suffix(".late").write_text("the copy outlived its job")
    sys.exit(7 if mode == "exit7" else 0)
    """
)


@pytest.fixture
def host_folder(tmp_path, monkeypatch):
    """A host folder of this test's own (short: a socket's path holds 107 bytes at most, less than
    a test's tmp_path under pytest-xdist); hosts leave 2 s after their last job."""
    runtime = Path(tempfile.mkdtemp(prefix="jh-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv(jobhost.IDLE_ENV, "2")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # as Snakemake runs a job
        monkeypatch.setenv(name, "1")
    monkeypatch.delenv(jobhost.ENV, raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    (tmp_path / "work").mkdir()
    (tmp_path / "tmp").mkdir()
    yield runtime / "voirdire"
    for lock in (runtime / "voirdire").glob("job-*.lock"):  # no host outlives its test
        with open(lock) as held, contextlib.suppress(ProcessLookupError, ValueError, IndexError):
            try:  # a host that left holds no lock, and its pid may be another process's by now
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.kill(int(held.read().split()[0]), signal.SIGKILL)
    shutil.rmtree(runtime, ignore_errors=True)


def job(tmp_path, mode="ok", threads=1, **env) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / f"{mode}-{threads}.json"
    done = subprocess.run(
        [sys.executable, str(tmp_path / "job.py"), mode, str(out), str(threads)],
        cwd=tmp_path / "work", capture_output=True, text=True, timeout=120,
        env={**os.environ, "ONLY_THIS_JOB": "yes", "TMPDIR": str(tmp_path / "tmp"), **env},
    )  # fmt: skip
    return done, json.loads(out.read_text())


def host_pid(folder: Path) -> int:
    (lock,) = folder.glob("job-*.lock")
    return int(lock.read_text().split()[0])


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_until(condition, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_copy_runs_the_job_as_the_job_would_on_its_streams_status_and_environment(tmp_path, host_folder):
    for mode, code in (("ok", 0), ("exit7", 7)):
        served, facts = job(tmp_path, mode)
        alone, own = job(tmp_path, mode, **{jobhost.ENV: "0"})
        assert served.returncode == alone.returncode == code, served.stderr
        assert served.stdout == alone.stdout == "to the job's stdout\n"
        assert served.stderr == alone.stderr == "to the job's stderr\n"
        assert facts["copy"] and not own["copy"]
        assert facts["ppid"] == host_pid(host_folder)  # forked by the host, not the job's child
        assert own["why"] == f"${jobhost.ENV}=0" and facts["why"] is None
        for name in ("cwd", "env", "argv", "tmp"):
            assert facts[name] == own[name], name
        assert facts["cwd"] == str(tmp_path / "work") and facts["tmp"] == str(tmp_path / "tmp")
        assert facts["modules"] == []  # no torch, litellm or Java in the host
        assert facts["comm"] == "j:job" and own["comm"] == "python"  # `ps` names the copy by its job
    # the host forks from one thread (a thread's locks would be copied held), jemalloc's purger aside
    tasks = Path(f"/proc/{host_pid(host_folder)}/task")
    assert {(t / "comm").read_text().strip() for t in tasks.iterdir()} - {"python"} <= set(jobhost.FORK_SAFE_THREADS)
    log = next(host_folder.glob("job-*.log"))
    reaped = r"job\.py \(job \d+, copy (\d+)\): exit {} after"  # each copy reaped, its CPU logged
    assert wait_until(lambda: re.search(reaped.format(7), log.read_text()), 10)
    assert "listening after" in log.read_text() and len(re.findall(reaped.format(0), log.read_text())) == 1
    # what the benchmarks add up: each copy's CPU seconds, from its line
    cpu = [float(c) for c in re.findall(r": exit \d+ after [\d.]+ s, ([\d.]+) CPU-s", log.read_text())]
    assert len(cpu) == 2 and jobhost.copies_cpu_s(log.read_text()) == pytest.approx(sum(cpu))
    assert jobhost.copies_cpu_s("listening after 1.0 s of imports\n") == 0


def test_an_uncaught_error_fails_the_job_as_it_would_alone(tmp_path, host_folder):
    served, facts = job(tmp_path, "raise")
    alone, _ = job(tmp_path, "raise", **{jobhost.ENV: "0"})
    assert facts["copy"] and served.returncode == alone.returncode == 1
    assert served.stderr.splitlines()[-1] == alone.stderr.splitlines()[-1] == "ValueError: a planted failure"
    assert "Traceback" in served.stderr


def test_jobs_of_more_threads_or_under_slurm_run_themselves_and_say_why(tmp_path, host_folder):
    _, two = job(tmp_path, "ok", threads=2)
    assert not two["copy"] and two["why"] == "2 threads (the host's libraries run on one)"
    _, slurm = job(tmp_path, "ok", SLURM_JOB_ID="7")
    assert not slurm["copy"] and "Slurm" in slurm["why"]
    assert not list(host_folder.glob("job-*.lock"))  # none of them started a host
    # a host whose imports would start a thread pool (two BLAS threads) does not serve: the job runs itself
    done, pooled = job(tmp_path, "ok", OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2")
    assert done.returncode == 0 and not pooled["copy"] and "the job host exited with 1" in pooled["why"]
    assert "not serving: the imports started threads" in next(host_folder.glob("job-*.log")).read_text()
    # nor does a host that would import another voirdire than its jobs do
    entry = "import sys; from voirdire.jobhost import main; sys.exit(main())"
    other = subprocess.run([sys.executable, "-c", entry, "--key", "elsewhere", "--package", "/elsewhere/voirdire"],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert other.returncode == 1 and "its jobs from /elsewhere/voirdire" in other.stdout


def test_a_killed_job_ends_its_copy_at_once(tmp_path, host_folder):
    out = tmp_path / "sleep-1.json"
    proc = subprocess.Popen([sys.executable, str(tmp_path / "job.py"), "sleep", str(out), "1"], cwd=tmp_path / "work",
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    assert wait_until(out.exists, 60), "the copy never started"
    copy = json.loads(out.read_text())["pid"]
    assert copy != proc.pid and alive(copy)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert wait_until(lambda: not alive(copy), 5), "the copy outlived its killed job"
    assert not out.with_suffix(".late").exists()
    log = next(host_folder.glob("job-*.log")).read_text()
    assert re.search(
        rf"job\.py \(job {proc.pid}, copy {copy}\): the job hung up before its copy finished: the copy killed", log
    )


def test_a_host_killed_under_a_running_copy_is_replaced_and_the_copy_still_ends_with_its_job(tmp_path, host_folder):
    out = tmp_path / "sleep-1.json"
    env = {**os.environ, "ONLY_THIS_JOB": "yes"}
    sleeper = subprocess.Popen([sys.executable, str(tmp_path / "job.py"), "sleep", str(out), "1"],
                               cwd=tmp_path / "work", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        assert wait_until(out.exists, 60)
        first = host_pid(host_folder)
        os.kill(first, signal.SIGKILL)  # its copy lives on, an orphan, and holds no lock of the host's
        assert wait_until(lambda: not alive(first), 5)
        # The next jobs start a new host and are run by its copies. Seen twice in full suites (not
        # alone): the first job after the kill is told "the job host left before it took the job"
        # and runs itself, as designed for a host that closes on a queued job (why the new host's
        # socket closed on it is not understood yet; the why names the pid that made the socket).
        whys = []
        for _ in range(3):
            served, facts = job(tmp_path, "ok")
            assert served.returncode == 0 and served.stdout == "to the job's stdout\n"  # either way, the job's
            if facts["copy"]:
                break
            whys.append(facts["why"])
        logs = "\n".join(p.read_text() for p in host_folder.glob("job-*.log"))
        seen = f"{whys}, the killed host {first}, now {host_pid(host_folder)}\n{logs}"
        assert facts["copy"] and len(whys) <= 1, seen
        assert all(re.fullmatch(r"the job host \(pid \d+\) left before it took the job", why) for why in whys), seen
        assert host_pid(host_folder) != first and facts["ppid"] == host_pid(host_folder)
        orphan = json.loads(out.read_text())["pid"]
        assert alive(orphan)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert wait_until(lambda: not alive(orphan), 5), "a copy whose host and job are gone lives on"
    assert not out.with_suffix(".late").exists()
    # and the host leaves when idle, taking its socket along
    second = host_pid(host_folder)
    assert wait_until(lambda: not alive(second), 30)
    assert not list(host_folder.glob("job-*.sock"))
    assert "no job for 2 s: leaving" in next(host_folder.glob("job-*.log")).read_text()


def test_a_host_that_leaves_without_taking_the_job_leaves_it_to_run_itself(tmp_path, host_folder):
    """A host leaving idle may close with a job still in its queue: the job was not taken (no copy
    said so), so it runs its script itself instead of failing."""
    address = jobhost._paths(jobhost.key())[0]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(1)

    def leave_with_the_job_queued() -> None:
        conn, _ = listener.accept()
        _, fds, _, _ = socket.recv_fds(conn, 4, 3)
        for fd in fds:  # the job's streams: held here, its output would never end
            os.close(fd)
        conn.close()

    leaving = threading.Thread(target=leave_with_the_job_queued)
    leaving.start()
    done, facts = job(tmp_path, "ok")
    leaving.join(10)
    listener.close()
    assert done.returncode == 0 and not facts["copy"]
    assert facts["why"] == f"the job host (pid {os.getpid()}) left before it took the job"  # this test's socket


LEAVING = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from voirdire.hostdir import hold_lock
    lock = hold_lock(Path(sys.argv[1]))  # a host's lock, its socket already gone: a host leaving
    print("held" if lock else "not held", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def test_a_job_that_comes_as_its_host_leaves_starts_one_again_instead_of_waiting(host_folder, monkeypatch):
    """A host leaving idle unlinks its socket, then exits (its lock held until then). A job that
    comes in between starts a host, which finds the lock held and leaves the answering to the
    holder, which never answers: once the holder has gone, the job starts one again, well within
    the start timeout (which it would otherwise wait out, then run its script itself)."""
    host_key = jobhost.key()
    _, lock_path, log_path = jobhost._paths(host_key)
    leaving = subprocess.Popen([sys.executable, "-c", LEAVING, str(lock_path), "1.5"], stdout=subprocess.PIPE,
                               text=True)  # fmt: skip
    try:
        assert leaving.stdout.readline().strip() == "held"
        monkeypatch.setattr(jobhost, "START_TIMEOUT_S", 40.0)
        with contextlib.closing(jobhost.connect(host_key)):  # Unavailable after 40 s without the restart
            pass
        assert leaving.poll() == 0  # the host that answers came after it
    finally:
        leaving.kill()
        leaving.wait()
    assert log_path.read_text().count("listening after") == 1


def test_the_key_follows_what_the_imports_read_and_nothing_else():
    base = {"PATH": "/usr/bin", "HOME": "/root", "OMP_NUM_THREADS": "1"}
    same = jobhost.key(base)
    assert jobhost.key({**base, "OPENAI_API_KEY": "sk-secret", "PYTEST_CURRENT_TEST": "x", "TMPDIR": "/t"}) == same
    assert jobhost.key({**base, "VOIRDIRE_RESUME_TEST_KEY": "sk-other"}) == same
    more = {jobhost.PRELOAD_ENV: "snakemake.cli"}  # a host that imports more is another host
    for changed in ({"OMP_NUM_THREADS": "2"}, {"MPLBACKEND": "pdf"}, {"PYTHONHASHSEED": "1"}, {"LC_ALL": "C"}, more):
        assert jobhost.key({**base, **changed}) != same, changed


def test_the_suites_snakemake_runs_in_a_copy_that_imported_it_and_answers_as_snakemake_does(tmp_path, host_folder):
    launcher = LAUNCH_SNAKEMAKE
    env = {**os.environ, jobhost.PRELOAD_ENV: "snakemake.cli"}
    served = subprocess.run([sys.executable, str(launcher), "--version"], capture_output=True, text=True,
                            env=env, timeout=120)  # fmt: skip
    alone = subprocess.run([sys.executable, "-m", "snakemake", "--version"], capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert served.returncode == alone.returncode == 0 and served.stdout == alone.stdout != ""
    log = next(host_folder.glob("job-*.log")).read_text()
    assert re.search(r"launch_snakemake\.py \(job \d+, copy \d+\): exit 0", log), log
    assert "not preloaded" not in log
    # an unknown option: Snakemake's own error and status, from the copy as from itself
    served = subprocess.run([sys.executable, str(launcher), "--no-such-option"], capture_output=True, text=True,
                            env=env, timeout=120)  # fmt: skip
    assert served.returncode == 2 and "unrecognized arguments: --no-such-option" in served.stderr
