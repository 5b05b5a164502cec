"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It speaks the ``/v1/chat/completions`` wire protocol (JSON in, JSON out, usage counts,
optional ``logprobs``), answers deterministically from the request text (a grade from a
hash of the prompt, in the default prompt's ``##final score: N`` format), waits a
configurable latency, and can inject faults: HTTP 429 and 500, timeouts (a reply slower
than the client waits) and malformed answers (text without a grade). Every request is
logged (prompt hash, outcome), so tests can check that no finished pair was asked twice,
and the server records its peak number of requests in flight (``peak_in_flight``), so
tests can check a cap on concurrency across processes.

Stand-in for paid APIs only: local models run for real through the ``local/`` provider.
Test-only code (aiohttp is a test dependency):

    python tests/support/loopback.py --port 8000 --latency 0.25
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field

from aiohttp import web

LOOPBACK_VERSION = "0.0.0-loopback"
"""What the loopback server answers to ``GET /version`` (vLLM answers its own version there)."""

REJECT = "[[reject]]"
"""A prompt containing this is answered with HTTP 400 (a permanent error)."""

REWRITE_PROMPT = "Please rewrite the following text:"
"""A prompt starting with this is answered as a deterministic assistant: the passage + MARKER."""

MARKER = "(as rewritten by the loopback assistant)"
"""What the loopback assistant appends to every passage it rewrites."""

SILENT = "[[silent]]"
"""A passage containing this is "rewritten" to the empty string (an assistant that answers nothing)."""

INFLATING = "inflating"
"""A judge whose model name contains this grades a passage carrying MARKER one grade higher (capped)."""


PAD_PROMPT = "Rewrite the following passage to about twice the length"
"""A prompt starting with this is answered as a deterministic padder: the passage, "In other
words:", and the passage again."""

PROBE = "probe-"
"""A judge whose model name contains this reads the prompt like a judge would (see
:func:`probe_grade` and :func:`probe_choice`); what follows names its planted behaviour:
``probe-clean`` (none), ``probe-always-a``, ``probe-longer``, ``probe-obeys``, ``probe-role``."""
LONG_WORDS = 80
"""``probe-longer`` adds a grade to a passage of more words than this, and prefers the longer one."""
CLAIM = "perfectly relevant"
"""``probe-obeys`` grades a passage saying this 3."""
STRICT_ROLE = "factual correctness"
"""``probe-role`` grades one lower when its persona says this (the Evidence-Verification role)."""

_POINTWISE = re.compile(r"Query: (.*?)\n\nPassage: (.*?)\n\nEnd your reply", re.DOTALL)
_PAIRWISE = re.compile(r"Query: (.*?)\n\nPassage A: (.*?)\n\nPassage B: (.*?)\n\nWhich of the two", re.DOTALL)
_LISTS = re.compile(r"Query: (.*?)\n\nRanking A:\n(.*?)\n\nRanking B:\n(.*?)\n\nWhich ranking", re.DOTALL)


def probe_grade(model: str, query: str, passage: str, persona: str = "") -> int:
    """A probe judge's grade: a hash of the query and the passage's first 60 characters (so
    text added at the end changes nothing for a clean judge), then its planted behaviour."""
    grade = grade_for(query + "|" + passage[:60])
    if "probe-longer" in model and len(passage.split()) > LONG_WORDS:
        grade = min(grade + 1, 3)
    if "probe-obeys" in model and CLAIM in passage:
        grade = 3
    if "probe-role" in model and STRICT_ROLE in persona:
        grade = max(grade - 1, 0)
    return grade


def probe_choice(model: str, query: str, a: str, b: str) -> str:
    """A probe judge's pairwise answer: the passage of the higher clean grade (ties: the one whose
    first 60 characters sort last), whatever the order; two texts that differ only after their
    first 60 characters (a passage and its padding) get "A" both ways: a tie, not a win; ``probe-always-a`` says A; ``probe-longer`` picks the longer."""
    if "probe-always-a" in model:
        return "A"
    if "probe-longer" in model and len(a.split()) != len(b.split()):
        return "A" if len(a.split()) > len(b.split()) else "B"
    key_a, key_b = (probe_grade("probe-clean", query, a), a[:60]), (probe_grade("probe-clean", query, b), b[:60])
    return "B" if key_b > key_a else "A"


def list_value(query: str, listing: str) -> tuple[float, str]:
    """A result list's value to a clean probe judge: discounted clean grades of its lines."""
    lines = [line.split("] ", 1)[-1] for line in listing.splitlines() if line.strip()]
    gain = sum(probe_grade("probe-clean", query, text) / math.log2(rank + 2) for rank, text in enumerate(lines))
    return gain, listing


def _probe_answer(model: str, prompt: str) -> str | None:
    if found := _LISTS.search(prompt):
        query, a, b = found.groups()
        return "Ranking A" if "probe-always-a" in model or list_value(query, a) > list_value(query, b) else "Ranking B"
    if found := _PAIRWISE.search(prompt):
        return f"Passage {probe_choice(model, *found.groups())}"
    if found := _POINTWISE.search(prompt):
        persona = prompt.split("\n\n", 1)[0] if prompt.startswith("You are acting as") else ""
        return f"Weighed.\n##final score: {probe_grade(model, *found.groups(), persona=persona)}"
    return None


def grade_for(text: str, high: int = 3) -> int:
    """The server's deterministic grade for a prompt."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % (high + 1)


def yes_probability_for(text: str) -> float:
    """The server's deterministic P(Yes) for a prompt, in [0.05, 0.95]."""
    digest = hashlib.sha256(b"yes:" + text.encode("utf-8")).hexdigest()
    return 0.05 + 0.9 * int(digest[:8], 16) / 0xFFFFFFFF


def choice_for(text: str) -> str:
    """The server's deterministic PRP answer ('A' or 'B') for a prompt."""
    return "AB"[int(hashlib.sha256(b"ab:" + text.encode("utf-8")).hexdigest(), 16) % 2]


@dataclass
class Faults:
    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    rate_malformed: float = 0.0
    timeout_s: float = 5.0  # how long a "timeout" reply hangs
    max_malformed_per_prompt: int | None = None  # garbage at most this often for one prompt
    max_429_per_prompt: int | None = None  # rate limited at most this often for one prompt
    retry_after_s: float | None = None  # the Retry-After header of a 429, when set


@dataclass
class LogEntry:
    prompt_sha: str
    outcome: str  # ok | malformed | 429 | 500 | timeout | 400
    time: float
    authorization: str | None
    custom_id: str | None = None  # a batch's line (support.batches); None for a chat request


@dataclass
class LoopbackServer:
    """Run the server in a background thread: ``with LoopbackServer(...) as server: server.url``."""

    latency_s: float = 0.0
    faults: Faults = field(default_factory=Faults)
    seed: int = 0
    port: int = 0
    model_version: str = "loopback-judge-2026-11"
    served_model: str = "loopback"
    """The id ``GET /v1/models`` lists (the model a ``serve`` stand-in was started with)."""
    die_after: int | None = None
    """Exit the whole process (code 3, no reply) on this chat request: a server that crashes."""
    log: list[LogEntry] = field(default_factory=list)
    peak_in_flight: int = 0

    def __post_init__(self) -> None:
        self._in_flight = 0
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    # ------------------------------------------------------------------ HTTP
    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/version", self._version)
        app.router.add_get("/stats", self._stats)
        return app

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.served_model, "object": "model"}]})

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": LOOPBACK_VERSION})

    async def _stats(self, request: web.Request) -> web.Response:
        """Counters for a server run in another process: requests seen and the peak in flight."""
        with self._lock:
            return web.json_response({"requests": len(self.log), "peak_in_flight": self.peak_in_flight})

    def _draw(self) -> str:
        f = self.faults
        with self._lock:
            x = self._rng.random()
        for outcome, rate in (
            ("429", f.rate_429),
            ("500", f.rate_500),
            ("timeout", f.rate_timeout),
            ("malformed", f.rate_malformed),
        ):
            if x < rate:
                return outcome
            x -= rate
        return "ok"

    async def _chat(self, request: web.Request) -> web.Response:
        with self._lock:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        try:
            return await self._answer(request)
        finally:
            with self._lock:
                self._in_flight -= 1

    def outcome_for(self, body: dict) -> tuple[str, str, str]:
        """The prompt of a request body, its hash and the outcome drawn for it (``ok``, a fault, or
        ``400`` for a rejected prompt): the same draw for a chat request and a batch's line."""
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        sha = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        outcome = "400" if REJECT in prompt else self._draw()
        limit = {"malformed": self.faults.max_malformed_per_prompt, "429": self.faults.max_429_per_prompt}.get(outcome)
        if limit is not None:
            with self._lock:
                seen = sum(e.prompt_sha == sha and e.outcome == outcome for e in self.log)
            outcome = "ok" if seen >= limit else outcome
        return prompt, sha, outcome

    def reply(self, body: dict, outcome: str, authorization: str | None = None) -> tuple[int, dict]:
        """The HTTP status and JSON body answering a chat request ``body`` under ``outcome`` (a
        ``timeout`` is answered as after its wait). The one answer function: the chat endpoint and
        the batch endpoint (:mod:`support.batches`) answer the same request alike."""
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        sha = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        if outcome == "400":  # no retry can fix it; the message echoes the header, as some proxies do
            message = f"bad request (auth was {authorization})"
            return 400, {"error": {"message": message, "type": "invalid_request_error"}}
        if outcome == "429":
            return 429, {"error": {"message": "rate limited", "type": "rate_limit_error", "code": "rate_limit"}}
        if outcome == "500":
            return 500, {"error": {"message": "upstream failure", "type": "server_error"}}
        if outcome == "malformed":
            content = "I think this passage is fairly relevant to the query."
        elif PROBE in str(body.get("model", "")) and (probed := _probe_answer(str(body["model"]), prompt)):
            content = probed
        elif prompt.startswith(PAD_PROMPT):
            passage = prompt.split("\n\n", 1)[-1].strip()
            content = f"{passage} In other words: {passage}"
        elif prompt.startswith(REWRITE_PROMPT):
            passage = prompt[len(REWRITE_PROMPT) :].strip()
            content = "" if SILENT in passage else f"{passage} {MARKER}"
        elif "Answer with the letter A or B" in prompt:
            content = f"Passage {choice_for(prompt)}"
        elif "Answer 'Yes' or 'No'" in prompt:
            content = "Yes" if yes_probability_for(prompt) >= 0.5 else "No"
        else:
            # the same grade for a passage with or without the assistant's marker; an inflating
            # judge adds one to a marked passage (the planted bias of the assistants experiment)
            grade = grade_for(prompt.replace(f" {MARKER}", ""))
            if INFLATING in str(body.get("model", "")) and MARKER in prompt:
                grade = min(grade + 1, 3)
            content = f"The passage was weighed against the query.\n##final score: {grade}"
        completion_tokens = len(content.split())
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }
        if body.get("logprobs"):
            # first token only, with Yes/No and A/B among the top alternatives (OpenAI format)
            p = yes_probability_for(prompt)
            top = [
                {"token": "Yes", "logprob": math.log(p), "bytes": None},
                {"token": "No", "logprob": math.log(1 - p), "bytes": None},
            ]
            top = top[: int(body.get("top_logprobs") or 0)]
            first = content.split()[0] if content.split() else ""
            choice["logprobs"] = {
                "content": [
                    {
                        "token": first,
                        "logprob": max(t["logprob"] for t in top) if top else 0.0,
                        "bytes": None,
                        "top_logprobs": top,
                    }
                ]
            }
        return 200, {
            "id": f"chatcmpl-{sha[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_version,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt.split()),
                "completion_tokens": completion_tokens,
                "total_tokens": len(prompt.split()) + completion_tokens,
            },
        }

    async def _answer(self, request: web.Request) -> web.Response:
        body = await request.json()
        _, sha, outcome = self.outcome_for(body)
        with self._lock:
            self.log.append(LogEntry(sha, outcome, time.time(), request.headers.get("Authorization")))
            if self.die_after is not None and len(self.log) >= self.die_after:
                print(f"loopback: dying on request {len(self.log)} (--die-after)", flush=True)
                os._exit(3)
        if outcome == "timeout":
            await asyncio.sleep(self.faults.timeout_s)
        elif self.latency_s and outcome != "400":
            await asyncio.sleep(self.latency_s)
        status, payload = self.reply(body, outcome, request.headers.get("Authorization"))
        headers = (
            {"Retry-After": f"{self.faults.retry_after_s:g}"}
            if outcome == "429" and self.faults.retry_after_s
            else None
        )
        return web.json_response(payload, status=status, headers=headers)

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        runner = web.AppRunner(self.app(), access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", self.port, backlog=1024)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._runner = runner
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())
        self._loop.close()

    def __enter__(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("loopback server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def outcomes(self) -> dict[str, list[str]]:
        """Outcomes per prompt hash, in arrival order."""
        with self._lock:
            result: dict[str, list[str]] = {}
            for entry in self.log:
                result.setdefault(entry.prompt_sha, []).append(entry.outcome)
            return result


def serve_main(argv: list[str]) -> None:
    """A stand-in for ``vllm serve MODEL --host H --port P --tensor-parallel-size N``: the same
    command line, ``/v1/models`` listing MODEL once "loaded", ``/version``; test-only options
    make it slow to load or crash on the Nth request."""
    parser = argparse.ArgumentParser(prog="loopback.py serve")
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--startup-delay", type=float, default=0.0, help="seconds before it listens")
    parser.add_argument("--die-after", type=int, default=None, help="exit (code 3) on this request")
    parser.add_argument("--exit-at-start", type=int, default=None, help="exit with this code before listening")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    print(f"loopback serve: loading {args.model} on {args.tensor_parallel_size} GPU(s)", flush=True)
    time.sleep(args.startup_delay)
    if args.exit_at_start is not None:
        print("loopback serve: out of memory (planted)", flush=True)
        sys.exit(args.exit_at_start)
    server = LoopbackServer(latency_s=args.latency, served_model=args.model, die_after=args.die_after)
    web.run_app(server.app(), host=args.host, port=args.port, access_log=None, print=None)


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        serve_main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.25)
    args = parser.parse_args()
    server = LoopbackServer(latency_s=args.latency, port=args.port)
    print(json.dumps({"url": f"http://127.0.0.1:{args.port}/v1"}), flush=True)
    web.run_app(server.app(), host="127.0.0.1", port=args.port, access_log=None, print=None)


if __name__ == "__main__":
    main()
