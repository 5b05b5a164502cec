"""Models the workflow serves itself (`serve:`), with the loopback server standing in for `vllm serve`.

The stand-in takes vLLM's command line (MODEL --host --port --tensor-parallel-size), lists MODEL
at /v1/models once "loaded", answers /version, and can load slowly, fail to start or crash on
the Nth request. Everything else is real: the service process, its readiness wait, its record,
Snakemake's service job and group, SIGTERM at the end, and the callers' store.
"""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import yaml
from conftest import ROOT, snakemake
from support.loopback import LOOPBACK_VERSION

from voirdire.errors import ConfigError, InputError
from voirdire.llm.endpoint import SERVED_KEY, Endpoint
from voirdire.llm.serve import ServeError, ServeSpec, attach, died, run_service

STAND_IN = f"{sys.executable} {ROOT / 'tests' / 'support' / 'loopback.py'} serve"


def spec(*args: str, **options) -> ServeSpec:
    return ServeSpec.from_config(
        {"model": "judge-x", "command": STAND_IN, "args": list(args), **options}, key="j.serve"
    )


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/models", timeout=2).read()
        return True
    except (urllib.error.URLError, OSError):
        return False


def start_service(tmp_path, *args: str, **options) -> tuple[subprocess.Popen, object, object]:
    """The serve rule's command, as Snakemake runs it: a process of its own."""
    service, server_log = tmp_path / "served.json", tmp_path / "server.log"
    fields = json.dumps(dataclasses.asdict(spec(*args, **options)))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "voirdire.llm.serve_job",
            "--spec",
            fields,
            "--service-file",
            str(service),
            "--server-log",
            str(server_log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return process, service, server_log


# ----------------------------------------------------------------------------- config
def test_a_serve_block_becomes_an_endpoint_without_api_base():
    endpoint = Endpoint.from_config({"serve": {"model": "Qwen/Qwen2.5-7B-Instruct", "gpus": 2}}, key="judges[0]")
    assert endpoint.model == "openai/Qwen/Qwen2.5-7B-Instruct" and endpoint.api_base is None
    assert endpoint.serve.argv(8123) == [
        "vllm",
        "serve",
        "Qwen/Qwen2.5-7B-Instruct",
        "--host",
        "127.0.0.1",
        "--port",
        "8123",
        "--tensor-parallel-size",
        "2",
    ]
    at = endpoint.at("http://127.0.0.1:8123/v1")
    assert at.api_base == "http://127.0.0.1:8123/v1"
    assert at.connection(None)["api_key"] == SERVED_KEY  # litellm's client insists on a key
    assert (
        Endpoint.from_config({"model": "openai/x", "api_base": "http://h/v1"}, key="k").connection(None).get("api_key")
        is None
    )


def test_a_server_name_follows_how_it_is_served():
    assert spec().name == spec().name and spec().name.startswith("judge-x-")
    assert spec("--max-model-len", "4096").name != spec().name
    assert spec(port=9000).name == spec().name  # where it listens is not what it serves


@pytest.mark.parametrize(
    ("entry", "key", "words"),
    [
        ({"model": "openai/m", "api_base": "http://h/v1", "serve": {"model": "m"}}, "judges[0].serve", "not both"),
        ({"serve": {"model": "m", "port": "any"}}, "judges[0].serve.port", "auto"),
        ({"serve": {"model": "m", "engine": "tgi"}}, "judges[0].serve.engine", "unknown engine"),
        ({"serve": {"model": "m", "gpu": 1}}, "judges[0].serve", "unknown keys"),
        ({"serve": {"gpus": 1}}, "judges[0].model", "needs 'model'"),
    ],
)
def test_a_bad_serve_block_is_one_error_naming_its_key(entry, key, words):
    with pytest.raises(ConfigError) as error:
        Endpoint.from_config(entry, key="judges[0]")
    assert error.value.key == key and words in str(error.value)


# ----------------------------------------------------------------------------- the service
def test_the_service_waits_until_ready_publishes_its_record_and_stops_the_server_on_sigterm(tmp_path):
    process, service, _ = start_service(tmp_path, "--startup-delay", "1.5")
    try:
        record = attach(service, timeout_s=60)
    finally:
        assert process.poll() is None, process.stdout.read()
    assert record["served_as"] == "judge-x" and record["engine_version"] == LOOPBACK_VERSION
    assert record["ready_after_s"] >= 1.5  # it waited for /v1/models, not for the process
    assert answers(record["url"])
    process.send_signal(signal.SIGTERM)  # what Snakemake does once the callers are done
    assert process.wait(30) == 0
    assert not answers(record["url"])  # the server went with it
    assert "stopped the server" in process.stdout.read()


def test_a_server_that_exits_before_it_is_ready_is_one_clear_error_with_its_last_words(tmp_path):
    process, service, _ = start_service(tmp_path, "--exit-at-start", "7")
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "voirdire: rule serve:" in out and "exited with code 7 before it was ready" in out
    assert "out of memory (planted)" in out  # the server log's tail comes with the error
    assert not service.exists()  # callers never see a record of a server that never ran
    with pytest.raises(ServeError, match="did not become ready within 1 s"):
        attach(service, timeout_s=1, poll_s=0.1)


def test_a_server_slower_than_startup_timeout_is_stopped_and_reported(tmp_path):
    with pytest.raises(ServeError, match=r"did not answer .*/v1/models within 1 s"):
        run_service(spec("--startup-delay", "30", startup_timeout_s=1), tmp_path / "s.json", tmp_path / "l.log")


def test_a_server_that_dies_leaves_its_cause_for_the_callers(tmp_path):
    process, service, _ = start_service(tmp_path, "--die-after", "1")
    record = attach(service, timeout_s=60)
    body = json.dumps({"model": "judge-x", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{record['url']}/chat/completions", body, {"Content-Type": "application/json"})
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(request, timeout=10)
    assert process.wait(30) == 1
    reason = died(service)
    assert "exited with code 3" in reason and "kept in the store" in reason
    assert "dying on request 1" in reason  # the server's log comes with it
    with pytest.raises(ServeError, match="exited with code 3"):
        attach(service, timeout_s=1)


def test_the_server_goes_when_its_keeper_is_killed(tmp_path):
    process, service, _ = start_service(tmp_path)
    record = attach(service, timeout_s=60)
    process.kill()  # SIGKILL: what Snakemake sends a failed group's jobs; no handler runs
    process.wait(10)
    for _ in range(50):
        if not answers(record["url"]):
            break
        time.sleep(0.2)
    assert not answers(record["url"])  # PR_SET_PDEATHSIG: the server got SIGTERM


def test_a_missing_serve_command_names_its_key(tmp_path):
    missing = ServeSpec.from_config({"model": "m", "command": "no-such-vllm serve"}, key="j.serve")
    with pytest.raises(InputError, match="'no-such-vllm' not found") as error:
        run_service(missing, tmp_path / "s.json", tmp_path / "l.log")
    assert error.value.key == "serve.command"


# ----------------------------------------------------------------------------- the workflow
def served_config(tmp_path, *args: str, extra: dict | None = None) -> str:
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["rankers"] = {}
    config["systems"] = ["BM25", "Perfect", "Swap[3]", "Swap[1]"]
    for section in ("assistants", "rewriting", "probes", "gaming", "variants"):
        config.pop(section, None)
    serve = {"model": "judge-x", "command": STAND_IN, "args": list(args)}
    config["judges"] = [
        {"name": "served", "kind": "llm", "serve": serve, "concurrency": 8, "parse_retries": 0},
        {"name": "length", "kind": "baseline", "method": "length"},
    ]
    config.update(extra or {})
    path = tmp_path / f"config{len(args)}.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def stand_ins(results) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if "loopback.py serve" in line and "judge-x" in line]


@pytest.mark.workflow
@pytest.mark.slow
def test_a_served_judge_reaches_table2_survives_its_server_dying_and_is_fingerprinted(tmp_path):
    out = tmp_path / "results"
    summary_path = out / "demo/judgments/original/served.summary.json"
    table2 = out / "tables/original/table2.csv"  # the tables job (the fingerprint beside it): all that is read
    # 1. the server crashes on its 5th request: one clear error, the 4 answers are kept
    crashed = snakemake(
        str(table2), "--cores", "2", "--configfile", served_config(tmp_path, "--die-after", "5"), check=False
    )
    assert crashed.returncode != 0
    lines = [line for line in crashed.stderr.splitlines() if line.startswith("voirdire:")]
    assert any("ServeError: the served model judge-x" in line and "exited with code 3" in line for line in lines)
    assert not summary_path.exists() and not stand_ins(out)  # no job finished, no server left
    # 2. a healthy server: the run completes and asks only what the crash left unanswered
    path = served_config(tmp_path)
    done = snakemake(str(table2), "--cores", "2", "--configfile", path)
    assert "Terminating service job" in done.stderr and not stand_ins(out)
    summary = json.loads(summary_path.read_text())
    assert summary["cached"] == 4 and summary["calls_this_run"] == summary["pairs"] - 4 > 0
    assert summary["served"] == {
        "engine": "vllm",
        "engine_version": LOOPBACK_VERSION,
        "model": "judge-x",
        "served_as": "judge-x",
    }
    fingerprint = json.loads((out / "tables/original/fingerprint.json").read_text())
    assert fingerprint["served"] == {"demo/served": summary["served"]}
    logs = sorted((out / "logs/serve").glob("*.0.log"))
    assert len(logs) == 2  # the crashed server's and the healthy one's (another name: other args)
    assert "stopped the server" in (out / f"logs/serve/{spec().name}.0.log").read_text()
    assert "served" in table2.read_text()
    # 3. a warm rerun starts no server and makes no call
    again = snakemake(str(table2), "--cores", "2", "--configfile", path)
    assert "Nothing to be done" in again.stderr
    assert sorted((out / "logs/serve").glob("*.0.log")) == logs


def test_each_caller_is_served_in_the_layer_after_what_it_waits_for(tmp_path):
    """Snakemake starts a service group's jobs at once, so a caller that waits for another caller
    of the same server gets a later start: pool 0; rewritten pool, sample, probes 1; sample of a
    rewritten collection 2. The dry run builds the DAG (no cycle, no group conflict)."""
    demo = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    extra = {key: demo[key] for key in ("assistants", "rewriting", "probes") if key in demo}
    extra["probes"] = {**extra["probes"], "judges": ["served"]}
    extra["rewriting"] = {**extra["rewriting"], "rankers": []}  # no ranker in this config
    path = served_config(tmp_path, extra=extra)
    dry = snakemake("-n", "--cores", "8", "--configfile", path)
    jobs = []  # (rule, {field: value}) from the dry run's job blocks
    for line in (dry.stdout + dry.stderr).splitlines():
        text = line.strip()
        if match := re.fullmatch(r"(?:local)?rule (\w+):", text):
            jobs.append((match[1], {}))
        elif jobs and (match := re.fullmatch(r"(input|output|wildcards): (.*)", text)):
            jobs[-1][1][match[1]] = match[2]
    layers = {}
    for rule, fields in jobs:
        if rule == "serve":
            layers[re.search(r"layer=(\d)", fields["wildcards"])[1]] = fields["output"].removesuffix(" (service)")
    assert sorted(layers) == ["0", "1", "2"]
    consumers = {}
    for rule, fields in jobs:
        for layer, output in layers.items():
            if output in fields.get("input", "").split(", "):
                consumers.setdefault(layer, set()).add((rule, "provenance=rewritten" in fields["wildcards"]))
    assert consumers["0"] == {("llm_judge", False)}
    assert consumers["1"] == {("llm_judge", True), ("llm_judge_sample", False), ("probe_judge", False)}
    assert consumers["2"] == {("llm_judge_sample", True)}
