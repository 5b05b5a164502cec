"""The judging engine: live LLM judges through litellm, cached, deduplicated, concurrent.

SPEC section 3. One call per unique (judge, prompt, query text, passage text, parameters,
sample index): the needed pairs are deduplicated before any call, every answer lands in the
:class:`~voirdire.store.Store` the moment it arrives, and a rerun asks only for missing keys.

Calls go through ``litellm.acompletion`` (any provider: OpenAI, Gemini, Anthropic, a vLLM
or Ollama server via ``api_base``, or the in-process ``local/`` provider), with bounded
concurrency, an optional requests-per-minute cap, a timeout, litellm's own retries with
backoff (``num_retries`` >= 3) and a few outer retries for transport failures that outlast
them. A transport failure is never stored; an answer that cannot be parsed is asked again
(``parse_retries`` times) and then stored as *unparsed*.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import ConfigError
from .judges import LLMJudge
from .llm_env import import_litellm
from .parsing import UNPARSED, parse_grade
from .store import Judgment, Store, request_key

log = logging.getLogger(__name__)

PERMANENT_ERRORS = ("AuthenticationError", "BadRequestError", "NotFoundError", "PermissionDeniedError")


def prepare_provider(model: str) -> None:
    """Register the in-process local provider when a judge uses a ``local/`` model."""
    if model.startswith("local/"):
        from .local_llm import register

        register()


@dataclass(frozen=True)
class Template:
    """A prompt template with ``{query}`` and ``{passage}`` slots; its hash joins every cache key."""

    text: str

    @classmethod
    def from_file(cls, path: str | Path) -> Template:
        return cls(Path(path).read_text(encoding="utf-8"))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, query: str, passage: str) -> list[dict[str, str]]:
        # str.replace, not str.format: templates may contain other braces (JSON examples)
        content = self.text.replace("{query}", query).replace("{passage}", passage)
        return [{"role": "user", "content": content}]


@dataclass(frozen=True)
class Task:
    key: str
    query_id: str
    doc_id: str
    sample: int
    messages: list[dict[str, str]] = field(hash=False, compare=False)
    passage_chars: int = 0


def build_tasks(
    judge: LLMJudge,
    pairs: pd.DataFrame,
    topics: dict[str, str],
    texts: dict[str, str],
) -> list[Task]:
    """One task per (pair, sample): exactly the pairs evaluation needs, each once."""
    template = Template.from_file(judge.prompt_file)
    unique = pairs[["query_id", "doc_id"]].drop_duplicates()
    tasks = []
    for row in unique.itertuples(index=False):
        messages = template.render(topics[row.query_id], texts[row.doc_id])
        for sample in range(judge.samples):
            key = request_key(
                {
                    "model": judge.model,
                    "messages": messages,
                    "temperature": judge.temperature,
                    "top_p": judge.top_p,
                    "max_tokens": judge.max_tokens,
                    "seed": judge.seed,
                    "sample": sample,
                    "template_sha256": template.sha256,
                    "scale": [judge.scale.low, judge.scale.high],
                }
            )
            tasks.append(
                Task(key, row.query_id, row.doc_id, sample, messages, len(texts[row.doc_id]))
            )
    return tasks


class RateLimiter:
    """Spaces request starts at least 60/rpm seconds apart (no cap when rpm is None)."""

    def __init__(self, rpm: float | None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


@dataclass
class RunStats:
    tasks: int = 0
    cached: int = 0
    requests: int = 0  # HTTP-level requests this run made, parse retries included
    stored: int = 0
    unparsed: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)


class JudgingIncomplete(RuntimeError):
    """Some calls failed for good; what succeeded is stored, a rerun asks for the rest."""


def api_key(judge: LLMJudge) -> str | None:
    if judge.api_key_env is None:
        return None
    value = os.environ.get(judge.api_key_env)
    if not value:
        raise ConfigError(
            f"environment variable {judge.api_key_env} (the judge's API key) is not set",
            key=f"judges.{judge.name}.api_key_env",
        )
    return value


def token_cost(litellm, model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """Price from litellm's cost map; 0 for models it has no price for (see :func:`has_price`)."""
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # noqa: BLE001 - unknown model: no price, not an error
        return 0.0
    return float(prompt_cost + completion_cost)


def has_price(litellm, model: str) -> bool:
    """Whether litellm's cost map prices ``model`` (else reported costs are 0 for lack of a price)."""
    try:
        litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
    except Exception:  # noqa: BLE001
        return False
    return True


async def _judge_tasks(
    judge: LLMJudge,
    tasks: Sequence[Task],
    store: Store,
    *,
    provenance: str,
    stats: RunStats,
    progress: bool,
    transport_attempts: int,
) -> None:
    litellm = import_litellm()
    prepare_provider(judge.model)
    key = api_key(judge)
    semaphore = asyncio.Semaphore(judge.concurrency)
    limiter = RateLimiter(judge.rpm)
    kwargs: dict = {
        "model": judge.model,
        "temperature": judge.temperature,
        "top_p": judge.top_p,
        "max_tokens": judge.max_tokens,
        "timeout": judge.timeout_s,
        "num_retries": judge.num_retries,
    }
    if judge.seed is not None:
        kwargs["seed"] = judge.seed
    if judge.api_base:
        kwargs["api_base"] = judge.api_base
    if key is not None:
        kwargs["api_key"] = key

    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), desc=f"judging {judge.name}", disable=not progress, unit="call")

    async def call(task: Task):
        for attempt in range(1, transport_attempts + 1):
            await limiter.wait()
            stats.requests += 1
            try:
                return await litellm.acompletion(messages=task.messages, **kwargs)
            except Exception as exc:  # noqa: BLE001 - classified below
                if type(exc).__name__ in PERMANENT_ERRORS or attempt == transport_attempts:
                    raise
                await asyncio.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
        raise AssertionError("unreachable")

    async def one(task: Task) -> None:
        async with semaphore:
            started = time.perf_counter()
            prompt_tokens = completion_tokens = 0
            attempts = 0
            for attempts in range(1, judge.parse_retries + 2):
                response = await call(task)
                text = response.choices[0].message.content
                usage = getattr(response, "usage", None)
                prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
                completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
                parsed = parse_grade(text, judge.scale.low, judge.scale.high)
                if parsed.ok:
                    break
            cost = token_cost(litellm, judge.model, prompt_tokens, completion_tokens)
            stored = store.put(
                Judgment(
                    key=task.key, judge=judge.name, query_id=task.query_id, doc_id=task.doc_id,
                    provenance=provenance, sample=task.sample, model=judge.model,
                    model_version=getattr(response, "model", None), raw=text,
                    label=parsed.label, status="ok" if parsed.ok else UNPARSED,
                    parse_rule=parsed.rule if parsed.ok else parsed.reason, attempts=attempts,
                    prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                    cost=cost, latency_s=time.perf_counter() - started,
                    passage_chars=task.passage_chars, created=time.time(),
                )
            )  # fmt: skip
            stats.stored += stored
            stats.unparsed += not parsed.ok
            stats.prompt_tokens += prompt_tokens
            stats.completion_tokens += completion_tokens
            stats.cost += cost
            bar.update(1)

    results = await asyncio.gather(*(one(t) for t in tasks), return_exceptions=True)
    bar.close()
    for result in results:
        if isinstance(result, BaseException):
            stats.failed += 1
            if len(stats.errors) < 5:
                stats.errors.append(f"{type(result).__name__}: {_redact(str(result), key)}")


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def judge_all(
    judge: LLMJudge,
    tasks: Sequence[Task],
    store: Store,
    *,
    provenance: str,
    progress: bool = True,
    transport_attempts: int = 4,
) -> RunStats:
    """Make every call ``tasks`` needs that ``store`` lacks; raise if any failed for good."""
    started = time.perf_counter()
    stats = RunStats(tasks=len(tasks))
    have = store.existing(t.key for t in tasks)
    stats.cached = len(have)
    missing = [t for t in tasks if t.key not in have]
    log.info("%s: %d tasks, %d cached, %d to call", judge.name, len(tasks), len(have), len(missing))
    if missing:
        asyncio.run(
            _judge_tasks(
                judge, missing, store, provenance=provenance, stats=stats,
                progress=progress, transport_attempts=transport_attempts,
            )
        )  # fmt: skip
    stats.wall_s = time.perf_counter() - started
    if stats.failed:
        raise JudgingIncomplete(
            f"{stats.failed} of {len(missing)} calls failed after retries (stored: "
            f"{stats.stored}; a rerun asks only for the missing ones). First errors: "
            + "; ".join(stats.errors)
        )
    return stats


def aggregate(judgments: pd.DataFrame) -> pd.DataFrame:
    """One label per pair from its samples: majority of parsed labels, ties by lower median.

    Returns (query_id, doc_id, relevance, samples, parsed, disagree); ``relevance`` is NA
    when no sample parsed (the pair is *unparsed*, never 0).
    """
    rows = []
    for (qid, docid), group in judgments.groupby(["query_id", "doc_id"], sort=True):
        labels = [int(v) for v in group["label"].dropna()]
        if labels:
            counts = Counter(labels).most_common()
            top = [label for label, n in counts if n == counts[0][1]]
            label = top[0] if len(top) == 1 else statistics.median_low(labels)
        else:
            label = None
        rows.append((qid, docid, label, len(group), len(labels), len(set(labels)) > 1))
    frame = pd.DataFrame(
        rows, columns=["query_id", "doc_id", "relevance", "samples", "parsed", "disagree"]
    )
    frame["relevance"] = frame["relevance"].astype("Int64")
    return frame


def summary(judge: LLMJudge, judgments: pd.DataFrame, labels: pd.DataFrame, stats: RunStats) -> dict:
    """What a judging job did and found: calls, cache hits, unparsed answers, cost."""
    multi = labels[labels["parsed"] >= 2]
    return {
        "judge": judge.name,
        "model": judge.model,
        "model_versions": sorted({v for v in judgments["model_version"].dropna()}),
        "samples_per_pair": judge.samples,
        "pairs": int(len(labels)),
        "unparsed_pairs": int(labels["relevance"].isna().sum()),
        "unparsed_answers": int((judgments["status"] == UNPARSED).sum()),
        "parse_rules": judgments.loc[judgments["status"] == "ok", "parse_rule"].value_counts().to_dict(),
        "repeat_disagreement_rate": float(multi["disagree"].mean()) if len(multi) else math.nan,
        "calls_this_run": stats.tasks - stats.cached,
        "requests_this_run": stats.requests,
        "cached": stats.cached,
        "cost_this_run_usd": stats.cost,
        "price_known": has_price(import_litellm(), judge.model),
        "cost_ledger_usd": float(judgments["cost"].sum()),
        "prompt_tokens_ledger": int(judgments["prompt_tokens"].fillna(0).sum()),
        "completion_tokens_ledger": int(judgments["completion_tokens"].fillna(0).sum()),
        "wall_s": stats.wall_s,
    }
