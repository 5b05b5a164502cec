"""The model host (voirdire.llm.local.host): a job's local-model work computed by one process on
the machine gives exactly what the job computes itself; the job imports no torch; a host that
dies or cannot start leaves the job to compute itself; an idle host leaves; one host per key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from voirdire.llm.local import host

pytestmark = pytest.mark.local_llm

PROMPTS = [
    [{"role": "user", "content": f"Query: {q}\nPassage: {p}\nGrade the passage from 0 to 3. Answer: ##final score: N"}]
    for q in ("how to boil an egg", "capital of france")
    for p in ("Simmer the eggs in water for nine minutes.", "Paris is the capital of France.", "Stocks rose.")
]  # fmt: skip
TEXTS = ["how to boil an egg", "Simmer the eggs in water for nine minutes.", "Paris is the capital of France."]

JOB = textwrap.dedent(
    """
    import json, sys
    from voirdire.llm.local import inference
    from voirdire.rankers import dense
    prompts, texts = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    generations = inference.generate(prompts, max_tokens=8)
    logprobs = inference.next_token_logprobs(prompts, ["0", "1", "2", "3"])
    embeddings = dense.embed("minilm", texts)
    print(json.dumps({
        "texts": [g.text for g in generations], "tokens": [g.prompt_tokens for g in generations],
        "logprobs": logprobs, "embeddings": embeddings.tolist(), "torch": "torch" in sys.modules,
    }))
    """
)


@pytest.fixture
def private(tmp_path, monkeypatch):
    """A host folder of this test's own (no other test's host answers here), jobs on one thread,
    the host leaving 3 s after its last job."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("VOIRDIRE_TORCH_THREADS", "1")
    monkeypatch.setenv(host.IDLE_ENV, "3")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    return runtime / "voirdire"


def job(model_host: str) -> dict:
    """A workflow job's model calls in a fresh process, with or without the host."""
    env = {**os.environ, host.ENV: model_host}
    done = subprocess.run([sys.executable, "-c", JOB, json.dumps(PROMPTS), json.dumps(TEXTS)], env=env,
                          capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1]) | {"stderr": done.stderr}


def host_pid(folder) -> int:
    (lock,) = folder.glob("*.lock")
    return int(lock.read_text().split()[0])


def gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_the_host_answers_exactly_what_the_job_computes_and_the_job_imports_no_torch(private):
    alone = job("0")
    assert alone["torch"]  # computed in the job itself
    served = job("1")
    assert not served["torch"], served["stderr"]  # torch, transformers, the models: in the host only
    assert served["texts"] == alone["texts"] and served["tokens"] == alone["tokens"]
    assert served["logprobs"] == alone["logprobs"]
    assert np.array_equal(np.array(served["embeddings"]), np.array(alone["embeddings"]))
    pid = host_pid(private)
    again = job("1")  # a second job finds the host running: the same host answers
    assert host_pid(private) == pid and again["texts"] == alone["texts"] and not again["torch"]
    assert gone(pid, within_s=30)  # idle for 3 s: it leaves, and takes its socket along
    assert not list(private.glob("*.sock"))
    assert "leaving after" in next(private.glob("*.log")).read_text()


def test_a_job_whose_host_dies_computes_itself_and_says_so(private, monkeypatch):
    served = job("1")
    os.kill(host_pid(private), signal.SIGKILL)  # the socket file stays behind
    assert list(private.glob("*.sock"))
    # the next job starts a new host over the dead one's socket
    assert job("1")["texts"] == served["texts"]
    # a host that dies in the middle of this process's work: the rest is computed here
    monkeypatch.setenv(host.ENV, "1")
    from voirdire.llm.local import inference

    assert [g.text for g in inference.generate(PROMPTS[:2], max_tokens=8)] == served["texts"][:2]
    os.kill(host_pid(private), signal.SIGKILL)
    time.sleep(0.2)
    assert [g.text for g in inference.generate(PROMPTS[2:], max_tokens=8)] == served["texts"][2:]
    assert os.environ[host.ENV] == "0"  # the job stops asking


def test_one_host_per_key_and_none_for_jobs_given_more_threads(private, monkeypatch):
    key = host.key()
    first = subprocess.Popen([sys.executable, "-m", "voirdire.llm.local.host", "--key", key, "--idle-s", "5"])
    try:
        deadline = time.monotonic() + 60
        while not list(private.glob("*.sock")):
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        second = subprocess.run([sys.executable, "-m", "voirdire.llm.local.host", "--key", key], timeout=60)
        assert second.returncode == host.ANOTHER  # the first holds the key's lock
    finally:
        first.kill()
        first.wait()
    monkeypatch.setenv(host.ENV, "1")
    assert host.enabled()
    monkeypatch.setenv("VOIRDIRE_TORCH_THREADS", "2")
    assert not host.enabled()  # its own threads: it computes itself
    monkeypatch.setenv("VOIRDIRE_TORCH_THREADS", "1")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert not host.enabled()
    monkeypatch.delenv("SLURM_JOB_ID")
    # the key follows what could change a number
    other = "bfloat16" if os.environ.get("VOIRDIRE_LOCAL_DTYPE") == "float32" else "float32"
    monkeypatch.setenv("VOIRDIRE_LOCAL_DTYPE", other)
    assert host.key() != key


FIRST = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from voirdire.llm.local import inference
    from voirdire.rankers import dense
    what, go = sys.argv[1], Path(sys.argv[2])
    while not go.exists():  # both jobs' first requests at once
        time.sleep(0.01)
    if what == "embed":
        print(json.dumps(dense.embed("minilm", ["how to boil an egg"]).tolist()))
    else:
        print(json.dumps([g.text for g in inference.generate([[{"role": "user", "content": "Hi"}]], max_tokens=4)]))
    """
)


def test_two_jobs_first_requests_at_once_load_both_models(private, tmp_path):
    """A new host asked for SmolLM2 and MiniLM at the same moment loads both (transformers'
    lazy imports do not survive two threads importing at once: the host loads under one lock)."""
    go = tmp_path / "go"
    env = {**os.environ, host.ENV: "1"}
    jobs = [subprocess.Popen([sys.executable, "-c", FIRST, what, str(go)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for what in ("embed", "generate")]  # fmt: skip
    time.sleep(1.0)
    go.touch()
    outputs = [job.communicate(timeout=600) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], outputs
    assert not any("computed in this job" in err for _, err in outputs)  # the host answered both
