"""LLM rankers through litellm: API models (the paper's Gemini PRP) and served vLLM.

RG needs the next-token distribution: the request asks for ``logprobs`` with
``top_logprobs`` (OpenAI protocol; vLLM's server and litellm's ``hosted_vllm/`` route give
them), and P(Yes) is the softmax over the "Yes"/"No" entries (a missing one counts as
-inf). An answer without logprobs is asked again (bounded), then RG fails with an error:
it never falls back to P(Yes) = 0.5. PRP with API models parses the answer text
("Passage A", "A", ...); an answer naming neither passage is asked again (bounded), then
recorded as None, which makes that pair order-dependent, never a win.

Every call goes through the one call path (:mod:`voirdire.llm`) with purpose ``rank``: cached
in the ranker's store, concurrent, retried, redacted, so reruns, resumed jobs and other
rankers asking the same prompt cost nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..llm import Answer, Call, Endpoint, Request, Store, Verdict, call_all, legacy, records
from .llm import p_yes

_CHOICE = re.compile(r"\bpassage\s*([ab])\b|^\W*([ab])\W*$", re.IGNORECASE)
REASKS = 2
"""Asks again when an answer names no passage (PRP) or has no logprobs (RG)."""


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


def accept_yes_probability(answer: Answer) -> Verdict:
    """RG: the first token's top_logprobs are present; the value is P(Yes)."""
    if not answer.top_logprobs:
        return Verdict(False, None, "no top_logprobs")
    return Verdict(True, p_yes(*yes_no_from_top_logprobs(answer.top_logprobs)), "top_logprobs")


def accept_choice(answer: Answer) -> Verdict:
    """PRP: the answer names exactly one passage; the value is 'A' or 'B'."""
    choice = parse_choice(answer.text)
    return Verdict(choice is not None, choice, "choice" if choice else "names neither passage")


@dataclass
class LiteLLMBackend:
    """Answers ranking prompts through litellm, cached in a store file."""

    endpoint: Endpoint
    store_path: Path
    ranker: str
    top_logprobs: int = 20
    max_in_flight: int | None = None

    def _requests(self, conversations: Sequence[list[dict]], method: str) -> list[tuple[Request, str]]:
        """The requests of ``method`` ('rg' or 'prp'), each with the key voirdire 0.1 gave it
        (:func:`voirdire.llm.legacy.ranker_key`), its alias."""
        if method == "rg":
            params = {"temperature": 0.0, "max_tokens": 1, "logprobs": True, "top_logprobs": self.top_logprobs}
        else:
            params = {"temperature": 0.0, "max_tokens": 8}
        model = self.endpoint.model
        return [
            (
                Request.chat(
                    "rank", model, messages, accept=f"{method}:{'logprobs' if method == 'rg' else 'choice'}", **params
                ),
                legacy.ranker_key(model, params, messages, method),
            )
            for messages in conversations
        ]

    def _answers(self, conversations, method: str, items) -> list:
        accept = accept_yes_probability if method == "rg" else accept_choice
        requests = self._requests(conversations, method)
        ids = items or [{}] * len(requests)
        calls = [
            Call(request, self.ranker, {"method": method, **item}, aliases=(alias,))
            for (request, alias), item in zip(requests, ids, strict=True)
        ]
        with Store(self.store_path) as store:
            call_all(
                self.endpoint,
                calls,
                store,
                accept=accept,
                reasks=REASKS,
                max_in_flight=self.max_in_flight,
                progress=False,
                desc=f"{self.ranker} ({method})",
                config_key=f"rankers.{self.ranker}",
            )
            stored = records(store, calls)
        return [stored[call.key] for call in calls]

    def yes_probabilities(self, conversations, items: Sequence[Mapping[str, str]] | None = None):
        answers = self._answers(conversations, "rg", items)
        if any(a.status != "ok" for a in answers):
            raise ValueError(
                f"{self.endpoint.model} returned no top_logprobs: RG needs them (a vLLM or "
                "OpenAI-compatible server does; most hosted chat APIs do not). Use PRP for it."
            )
        return [a.value for a in answers]

    def preferences(self, conversations, items: Sequence[Mapping[str, str]] | None = None):
        return [a.value if a.status == "ok" else None for a in self._answers(conversations, "prp", items)]
