"""A job's API calls leave from its own process (no helper process, nothing sent to another
process), one request per call, against a real HTTP server on 127.0.0.1 speaking the OpenAI
protocol; every call's cost is litellm's price of its own token counts, asked once per distinct
pair of counts in a run."""

from __future__ import annotations

import email.utils

import httpx
import psutil
import pytest
from conftest import LOOPBACK_KEY
from support.loopback import LoopbackServer

from voirdire.llm import Call, Endpoint, Request, Store, call_all, calls


def planted_calls(endpoint: Endpoint, count: int) -> list[Call]:
    """``count`` grading calls whose prompts have one of three lengths (so some share token counts)."""
    return [
        Call(
            Request.chat(
                "judge", endpoint.model, [{"role": "user", "content": f"Grade passage {i}." + " word" * (i % 3)}]
            ),
            caller="test",
            items={"i": str(i)},
        )
        for i in range(count)
    ]


def loopback_endpoint(server: LoopbackServer) -> Endpoint:
    return Endpoint("openai/loopback", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY", concurrency=8)


def test_a_workflow_jobs_api_calls_leave_from_its_own_process(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    monkeypatch.setenv("VOIRDIRE_TORCH_THREADS", "1")  # as voirdire.jobscript.start sets it in a job
    monkeypatch.setenv("VOIRDIRE_MODEL_HOST", "1")  # what once sent a job's calls to a call host: now nothing
    children = {child.pid for child in psutil.Process().children(recursive=True)}
    with LoopbackServer() as server:
        endpoint = loopback_endpoint(server)
        planted = planted_calls(endpoint, 12)
        with Store(tmp_path / "store.sqlite") as store:
            stats = call_all(endpoint, planted, store, progress=False)
            stored = list(store.get(call.key for call in planted))
        requests = len(server.log)
    assert stats.stored == len(stored) == len(planted) == requests  # one request a call, none sent twice
    assert {child.pid for child in psutil.Process().children(recursive=True)} <= children  # no helper started


def test_each_distinct_token_count_is_priced_once_a_run_and_every_call_gets_its_price(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    asked: list[tuple[int, int]] = []

    def price(litellm, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        asked.append((prompt_tokens, completion_tokens))
        return prompt_tokens * 1e-6 + completion_tokens * 3e-6

    monkeypatch.setattr(calls, "token_cost", price)
    with LoopbackServer() as server:
        endpoint = loopback_endpoint(server)
        planted = planted_calls(endpoint, 30)
        with Store(tmp_path / "store.sqlite") as store:
            stats = call_all(endpoint, planted, store, progress=False)
            stored = list(store.get(call.key for call in planted))
    counts = {(record.prompt_tokens, record.completion_tokens) for record in stored}
    assert len(stored) == len(planted) and 1 < len(counts) < len(stored)
    assert sorted(asked) == sorted(counts)  # once for each distinct pair of counts
    for record in stored:
        assert record.cost == record.prompt_tokens * 1e-6 + record.completion_tokens * 3e-6
    assert stats.cost == pytest.approx(sum(record.cost for record in stored), rel=1e-12)


@pytest.mark.parametrize(
    ("headers", "attempt", "wait"),
    [
        ({}, 1, 0.5),  # no word from the provider: the backoff, doubling to at most 8 s
        ({}, 3, 2.0),
        ({}, 9, 8.0),
        ({"Retry-After": "7"}, 1, 7.0),  # seconds, when longer than the backoff
        ({"Retry-After": "1"}, 3, 2.0),  # shorter: the backoff stands
        ({"retry-after-ms": "2500", "Retry-After": "9"}, 1, 2.5),  # OpenAI's milliseconds first
        ({"Retry-After": "600"}, 1, 60.0),  # at most a minute
        ({"Retry-After": "soon"}, 2, 1.0),  # unreadable: the backoff
        ({"Retry-After": email.utils.formatdate(1_000_012, usegmt=True)}, 1, 12.0),  # an HTTP date
    ],
)
def test_a_resend_waits_the_backoff_or_what_the_provider_asks(headers, attempt, wait):
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    error = calls._litellm().RateLimitError("rate limited", llm_provider="openai", model="m", response=response)
    assert calls.retry_delay(error, attempt, now=1_000_000) == pytest.approx(wait)
