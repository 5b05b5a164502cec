"""LLM rankers through litellm: API models (the paper's Gemini PRP) and served vLLM.

RG needs the next-token distribution: the request asks for ``logprobs`` with
``top_logprobs`` (OpenAI protocol; vLLM's server and litellm's ``hosted_vllm/`` route give
them), and P(Yes) is the softmax over the "Yes"/"No" entries (a missing one counts as
-inf). PRP with API models parses the answer text ("Passage A", "A", ...); an answer naming
neither passage is recorded as None and makes that pair order-dependent, never a win.

Every call goes through the judgment store (:mod:`voirdire.store`), keyed like judgments,
so reruns, resumed jobs and other rankers asking the same prompt cost nothing.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..engine import RateLimiter, api_key, prepare_provider, token_cost
from ..llm_env import import_litellm
from ..judges import LLMJudge
from ..store import Judgment, Store, request_key
from .llm import p_yes

_CHOICE = re.compile(r"\bpassage\s*([ab])\b|^\W*([ab])\W*$", re.IGNORECASE)


def _field(obj, name: str):
    """An attribute of a litellm response part, whether it came as an object or a dict."""
    if obj is None:
        return None
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def parse_choice(text: str | None) -> str | None:
    """'A' or 'B' from an answer text, or None when it names neither or both."""
    found = {(m.group(1) or m.group(2)).upper() for m in _CHOICE.finditer((text or "").strip())}
    return found.pop() if len(found) == 1 else None


def yes_no_from_top_logprobs(top: Sequence[dict]) -> tuple[float, float]:
    """Log-probabilities of "Yes" and "No" among a first token's top_logprobs (-inf if absent)."""
    best = {"yes": -math.inf, "no": -math.inf}
    for entry in top:
        token = str(entry["token"]).strip().lower()
        if token in best:
            best[token] = max(best[token], float(entry["logprob"]))
    return best["yes"], best["no"]


@dataclass
class LiteLLMBackend:
    """Answers ranking prompts through litellm, cached in a store file."""

    settings: LLMJudge  # model, api_base, api_key_env, concurrency, rpm, timeout_s, num_retries
    store_path: Path
    ranker: str
    top_logprobs: int = 20

    def _run(self, conversations: Sequence[list[dict]], purpose: str) -> list[dict]:
        return asyncio.run(self._run_async(conversations, purpose))

    async def _run_async(self, conversations, purpose) -> list[dict]:
        s = self.settings
        litellm = import_litellm()
        prepare_provider(s.model)
        params = {"model": s.model, "temperature": 0.0, "max_tokens": 1 if purpose == "rg" else 8}
        if purpose == "rg":
            params.update(logprobs=True, top_logprobs=self.top_logprobs)
        keys = [request_key({**params, "messages": m, "purpose": purpose}) for m in conversations]
        semaphore, limiter = asyncio.Semaphore(s.concurrency), RateLimiter(s.rpm)
        secret = api_key(s)
        extra = {"timeout": s.timeout_s, "num_retries": s.num_retries}
        if s.api_base:
            extra["api_base"] = s.api_base
        if secret:
            extra["api_key"] = secret
        with Store(self.store_path) as store:
            cached = {j.key: j for j in store.get(keys)}

            async def one(key: str, messages: list[dict]) -> None:
                if key in cached:
                    return
                async with semaphore:
                    await limiter.wait()
                    started = time.perf_counter()
                    response = await litellm.acompletion(messages=messages, **params, **extra)
                    choice = response.choices[0]
                    text = choice.message.content
                    raw = {"text": text}
                    if purpose == "rg":
                        content = _field(_field(choice, "logprobs"), "content") or [None]
                        raw["top_logprobs"] = [
                            {"token": _field(t, "token"), "logprob": _field(t, "logprob")}
                            for t in _field(content[0], "top_logprobs") or []
                        ]
                    usage = getattr(response, "usage", None)
                    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
                    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
                    judgment = Judgment(
                        key=key, judge=self.ranker, query_id="", doc_id="", provenance=purpose,
                        sample=0, model=s.model, model_version=getattr(response, "model", None),
                        raw=json.dumps(raw), label=None, status="ok", parse_rule=purpose,
                        attempts=1, prompt_tokens=tokens_in, completion_tokens=tokens_out,
                        cost=token_cost(litellm, s.model, tokens_in, tokens_out),
                        latency_s=time.perf_counter() - started, passage_chars=None,
                        created=time.time(),
                    )  # fmt: skip
                    store.put(judgment)
                    cached[key] = judgment

            await asyncio.gather(*(one(k, m) for k, m in zip(keys, conversations, strict=True)))
        return [json.loads(cached[k].raw) for k in keys]

    def yes_probabilities(self, conversations):
        results = self._run(conversations, "rg")
        if any(not r.get("top_logprobs") for r in results):
            raise ValueError(
                f"{self.settings.model} returned no top_logprobs: RG needs them (a vLLM or "
                "OpenAI-compatible server does; most hosted chat APIs do not). Use PRP for it."
            )
        return [p_yes(*yes_no_from_top_logprobs(r["top_logprobs"])) for r in results]

    def preferences(self, conversations):
        return [parse_choice(r["text"]) for r in self._run(conversations, "prp")]
