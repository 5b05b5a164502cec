"""The call host (voirdire.llm.callhost): a workflow job's API calls, sent by one process on the
machine, against a real HTTP server on 127.0.0.1 speaking the OpenAI protocol, with a real SQLite
store. The job imports no litellm and stores what it would have stored calling litellm itself;
errors keep their class (a permanent one fails at once) and the API key stays out of every file;
a host that dies leaves the job to call litellm itself; only jobs with the same environment share
a host."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from support.loopback import REJECT, Faults, LoopbackServer

from voirdire.llm import callhost
from voirdire.llm.local import host

SECRET = "sk-planted-call-host-9d2e-never-store-me"

JOB = textwrap.dedent(
    """
    import json, os, signal, sys
    from voirdire.llm import Endpoint, Request, Store, fill_store, Call
    from voirdire.llm.calls import price_known
    import asyncio
    url, store_path, n, reject, kill_after = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    endpoint = Endpoint("openai/loopback", api_base=url, api_key_env="VOIRDIRE_TEST_KEY", concurrency=8)
    def message(i):
        return [{"role": "user", "content": f"Grade passage {i} for query {i % 3}." + (reject if i == 0 else "")}]
    calls = [Call(Request.chat("judge", endpoint.model, message(i), logprobs=True, top_logprobs=2),
                  caller="loop", items={"i": str(i)}) for i in range(n)]
    if kill_after:  # the host dies once this many calls are stored
        from voirdire.llm.local import host
        async def run():
            with Store(store_path) as store:
                task = asyncio.ensure_future(fill_store(endpoint, calls, store, progress=False))
                stored = lambda: len(store.existing(c.key for c in calls))
                while not (lock := next(host.directory().glob("calls-*.lock"), None)) or stored() < kill_after:
                    assert not task.done(), "the job ended before the host could be killed"
                    await asyncio.sleep(0.01)
                os.kill(int(lock.read_text().split()[0]), signal.SIGKILL)
                return await task
        stats = asyncio.run(run())
    else:  # in two runs, as a job of several tasks does: each asyncio.run its own event loop
        with Store(store_path) as store:
            asyncio.run(fill_store(endpoint, calls[: n // 2], store, progress=False))
            stats = asyncio.run(fill_store(endpoint, calls, store, progress=False))
    with Store(store_path) as store:
        records = [r.__dict__ for r in store.get(c.key for c in calls)]
    print(json.dumps({
        "records": {r["key"]: {k: r[k] for k in ("raw", "logprobs", "model_version", "prompt_tokens",
                                                "completion_tokens", "cost", "status", "value")}
                    for r in records},
        "failed": stats.failed, "errors": stats.errors, "stored": stats.stored,
        "price_known": price_known(endpoint.model), "priced": price_known("openai/gpt-4o"),
        "litellm": "litellm" in sys.modules,
    }))
    """
)


@pytest.fixture
def private(monkeypatch):
    """A host folder of this test's own, the host leaving 3 s after its last job. (Under /tmp:
    a Unix socket's path has at most 107 bytes, and an xdist worker's tmp_path is longer.)"""
    runtime = Path(tempfile.mkdtemp(prefix="vd-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv(host.IDLE_ENV, "3")
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", SECRET)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    yield runtime / "voirdire"
    shutil.rmtree(runtime, ignore_errors=True)


def job(tmp_path, url: str, *, uses_host: str, n: int = 12, name: str = "store", kill_after: int = 0) -> dict:
    env = {**os.environ, host.ENV: uses_host}
    done = subprocess.run(
        [sys.executable, "-c", JOB, url, str(tmp_path / f"{name}.sqlite"), str(n), REJECT, str(kill_after)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]) | {"stderr": done.stderr}


def host_pid(folder) -> int:
    (lock,) = folder.glob("calls-*.lock")
    return int(lock.read_text().split()[0])


def test_the_host_stores_what_the_job_would_and_the_job_imports_no_litellm(tmp_path, private):
    with LoopbackServer() as server:
        alone = job(tmp_path, server.url, uses_host="0", name="alone")
        served = job(tmp_path, server.url, uses_host="1", name="served")
        pid = host_pid(private)
        again = job(tmp_path, server.url, uses_host="1", name="again")  # a second job: the same host
        assert host_pid(private) == pid
        assert len(server.log) == 3 * (12 + 1)  # one request per call (the 400, asked in both runs, not retried)
    assert alone["litellm"] and not served["litellm"] and not again["litellm"]
    assert served["records"] == alone["records"] == again["records"]
    assert len(served["records"]) == 11 and all(r["logprobs"] for r in served["records"].values())
    # the rejected call fails at once, by the same class of error, its message redacted
    assert "went away" not in served["stderr"] + again["stderr"]
    for result in (alone, served):
        assert result["failed"] == 1
        assert result["errors"][0].startswith("BadRequestError") and "***" in result["errors"][0]
        assert (result["price_known"], result["priced"]) == (False, True)
    # the key reached the server, and no file of the host's or the job's
    assert any(e.authorization and SECRET in e.authorization for e in server.log)
    written = [p for folder in (tmp_path, private) for p in folder.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in written) and any(p.suffix == ".log" for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    assert "listening" in next(private.glob("calls-*.log")).read_text()


def test_a_job_whose_host_dies_calls_litellm_itself_and_says_so(tmp_path, private):
    with LoopbackServer(latency_s=0.05, faults=Faults()) as server:
        reference = job(tmp_path, server.url, uses_host="0", n=40, name="reference")
        result = job(tmp_path, server.url, uses_host="1", n=40, name="killed", kill_after=10)
    assert result["litellm"]  # imported once the host was gone
    assert "the call host went away" in result["stderr"]
    assert result["records"] == reference["records"] and result["failed"] == 1  # the 400 only


def test_only_jobs_with_the_same_environment_share_a_host(monkeypatch):
    first = callhost.key()
    monkeypatch.setenv("OMP_NUM_THREADS", "7")  # Snakemake's thread counts differ job by job
    monkeypatch.setenv("VOIRDIRE_TORCH_THREADS", "7")
    monkeypatch.setenv(host.ENV, "0")
    assert callhost.key() == first
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # litellm would send differently
    assert callhost.key() != first
    assert "127.0.0.1" not in callhost.key()


def test_errors_cross_by_class_name():
    from voirdire.llm.calls import is_connection_failure, is_permanent

    assert is_permanent(callhost.as_raised(callhost.Failed("AuthenticationError", "no")))
    assert is_connection_failure(callhost.as_raised(callhost.Failed("APIConnectionError", "refused")))
    assert not is_permanent(callhost.as_raised(callhost.Failed("RateLimitError", "slow down")))
    assert str(callhost.as_raised(callhost.Failed("RateLimitError", "slow down"))) == "slow down"


def test_a_host_left_behind_is_not_reached(tmp_path, private, monkeypatch):
    """A killed host's socket file stays; the next job starts a new host over it."""
    with LoopbackServer() as server:
        job(tmp_path, server.url, uses_host="1", n=3, name="first")
        os.kill(host_pid(private), signal.SIGKILL)
        time.sleep(0.2)
        assert list(private.glob("calls-*.sock"))
        result = job(tmp_path, server.url, uses_host="1", n=3, name="second")
    assert not result["litellm"] and len(result["records"]) == 2


def test_a_host_folder_too_long_for_a_socket_leaves_the_job_to_call_itself(tmp_path, monkeypatch):
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    deep.mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    monkeypatch.setenv(host.ENV, "1")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(callhost, "_relay", None)
    assert callhost.relay() is None  # no crash: the job imports litellm instead
    assert os.environ[host.ENV] == "0"


HANGING_JOB = textwrap.dedent(
    """
    import asyncio, sys
    from voirdire.llm import Call, Endpoint, Request, Store, fill_store
    endpoint = Endpoint("openai/loopback", api_base=sys.argv[1], api_key_env="VOIRDIRE_TEST_KEY", concurrency=2,
                        timeout_s=1.0, num_retries=3)
    calls = [Call(Request.chat("judge", endpoint.model, [{"role": "user", "content": f"hang {i}"}]), caller="loop")
             for i in range(2)]
    with Store(sys.argv[2]) as store:
        asyncio.run(fill_store(endpoint, calls, store, progress=False))
    """
)


def test_a_killed_jobs_calls_in_flight_stop_in_the_host(tmp_path, private):
    """litellm in the host would retry a hanging call three more times for a job that is gone."""
    with LoopbackServer(faults=Faults(rate_timeout=1.0, timeout_s=30)) as server:
        env = {**os.environ, host.ENV: "1"}
        process = subprocess.Popen([sys.executable, "-c", HANGING_JOB, server.url, str(tmp_path / "s.sqlite")], env=env)
        deadline = time.monotonic() + 120
        while len(server.log) < 2:  # both calls' first attempts hang in the server
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.02)
        assert list(private.glob("calls-*.sock"))  # sent by the host
        process.kill()
        process.wait()
        asked = len(server.log)
        time.sleep(5)  # the host's litellm would time out and retry every second
        more = len(server.log) - asked
        assert more <= 2, more  # at most a retry already under way when it looked
