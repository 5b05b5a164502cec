"""The one call path: every LLM call of every purpose fills the store through here.

Judges, rankers, assistants and probes each describe their calls (a :class:`Call`: the
:class:`~voirdire.llm.request.Request`, the caller's name and the ids it gives) and an
acceptance rule (:data:`Accept`: does the answer parse, are logprobs present?).
:func:`fill_store` does the rest, once, for all of them:

* skips keys already stored (and re-keys answers an older release stored under an alias);
* bounds calls in flight (the endpoint's ``concurrency``, capped by the job's share of the
  workflow-wide ``llm_slots``) and spaces starts for an ``rpm`` cap;
* resends a request that failed in transit (the endpoint's ``num_retries``, with backoff and
  the provider's ``Retry-After``), and only here: litellm and the provider SDK resend nothing,
  so every request sent is counted (``RunStats.requests``) and none is paid twice unseen;
  permanent errors (auth, bad request, not found) fail at once;
* asks again, at most ``reasks`` times, when the answer is not accepted, then stores it as
  *unparsed* with its raw text (never as a made-up value);
* records tokens, cost, latency and the provider's model version for every call;
* collects errors, redacted of the API key, without aborting the other calls;
* shows a tqdm bar and returns per-run :class:`RunStats`;
* or, for a caller that asks for it (a judge's ``batch:``), sends the calls the store lacks as
  provider batches at the batch price and waits for them (:mod:`voirdire.llm.batch`), asking
  directly only what the batches could not answer.

This package is the only one that imports litellm (lazily, through :mod:`voirdire.llm.env`),
in the process that makes the calls: a workflow job sends its own API calls. The local model
(``local/...``) is called in this process without it
(:func:`voirdire.llm.local.provider.acompletion`): a job of the local model never imports litellm.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import importlib.metadata
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .endpoint import Endpoint
from .env import import_litellm
from .request import Request
from .store import Record, Store

log = logging.getLogger(__name__)

PERMANENT_ERRORS = (
    "AuthenticationError",
    "BadRequestError",
    "NotFoundError",
    "PermissionDeniedError",
    "UnprocessableEntityError",
    "ContentPolicyViolationError",
    "ContextWindowExceededError",
)
"""litellm exception classes that no retry can fix: the call fails at once."""

PERMANENT_MESSAGES = ("Missing credentials",)
"""Failures litellm reports under a transient class that no retry can fix either (the OpenAI
client raises "Missing credentials" before sending anything; litellm wraps it as a 500)."""


def is_permanent(error: BaseException) -> bool:
    return type(error).__name__ in PERMANENT_ERRORS or any(m in str(error) for m in PERMANENT_MESSAGES)


CONNECTION_FAILURES = ("APIConnectionError", "Timeout", "APITimeoutError")
"""Errors that say the endpoint is not answering at all (refused, unreachable, hanging)."""
CONNECTION_MESSAGES = ("Connection error",)
"""litellm reports a refused connection as an InternalServerError with this message."""


MAX_RETRY_AFTER_S = 60.0
"""The longest wait a provider's ``Retry-After`` may ask of one resend (a longer one is cut to it)."""


def retry_delay(error: BaseException, attempt: int, *, now: float | None = None) -> float:
    """Seconds to wait before resending after ``attempt`` failed with ``error``: exponential
    backoff (0.5, 1, 2, ... at most 8 s), or what the provider asks when it asks for longer (at
    most :data:`MAX_RETRY_AFTER_S`): ``retry-after-ms`` (OpenAI's, milliseconds), else
    ``Retry-After`` in seconds or as an HTTP date (``now``: the clock it is read against)."""
    backoff = min(8.0, 0.5 * 2 ** (attempt - 1))
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    asked = 0.0
    with contextlib.suppress(TypeError, ValueError):  # garbage: the backoff stands
        if (ms := headers.get("retry-after-ms")) is not None:
            asked = float(ms) / 1000
        elif (value := headers.get("retry-after")) is not None:
            try:
                asked = float(value)
            except ValueError:  # an HTTP date
                asked = email.utils.parsedate_to_datetime(value).timestamp() - (time.time() if now is None else now)
    return max(backoff, min(asked, MAX_RETRY_AFTER_S))


def is_connection_failure(error: BaseException) -> bool:
    return type(error).__name__ in CONNECTION_FAILURES or any(m in str(error) for m in CONNECTION_MESSAGES)


OK, UNPARSED = "ok", "unparsed"


def _field(obj: Any, name: str) -> Any:
    """An attribute of a litellm response part, whether it came as an object or a dict."""
    if obj is None:
        return None
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


@dataclass(frozen=True)
class Answer:
    """What a model said: text, first-token ``top_logprobs`` (when asked), version, tokens."""

    text: str | None
    top_logprobs: list[dict] | None = None
    model_version: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @classmethod
    def from_response(cls, response: Any) -> Answer:
        choice = _field(response, "choices")[0]
        content = _field(_field(choice, "logprobs"), "content")
        top = None
        if content:
            top = [
                {"token": _field(t, "token"), "logprob": _field(t, "logprob")}
                for t in _field(content[0], "top_logprobs") or []
            ]
        usage = _field(response, "usage")
        return cls(
            text=_field(_field(choice, "message"), "content"),
            top_logprobs=top,
            model_version=_field(response, "model"),
            prompt_tokens=int(_field(usage, "prompt_tokens") or 0),
            completion_tokens=int(_field(usage, "completion_tokens") or 0),
        )

    @classmethod
    def from_record(cls, record: Record) -> Answer:
        return cls(record.raw, record.logprobs, record.model_version)


@dataclass(frozen=True)
class Verdict:
    """An acceptance rule's reading of an answer: accepted or not, the value, which rule (or why not)."""

    ok: bool
    value: Any = None
    rule: str | None = None


Accept = Callable[[Answer], Verdict]


def accept_any(answer: Answer) -> Verdict:
    """Every answer is accepted as it is (its text is the value)."""
    return Verdict(True, answer.text, "text")


@dataclass(frozen=True)
class Call:
    """One answer a caller needs: the request, who asks, the ids it gives, older keys of it."""

    request: Request
    caller: str
    items: Mapping[str, str] = field(default_factory=dict, hash=False)
    aliases: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.request.key


@dataclass
class RunStats:
    """What one :func:`fill_store` run did."""

    calls: int = 0  # unique keys asked for
    cached: int = 0  # answered by the store (adopted ones included)
    adopted: int = 0  # answered by a row an older release stored under another key
    seeded: int = 0  # answered by a finished store of another job (copied, at cost 0)
    requests: int = 0  # HTTP-level requests, transport retries and re-asks included
    resent: dict[str, int] = field(default_factory=dict)  # requests sent again, by the failure's class name
    stored: int = 0
    unparsed: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency_s: float = 0.0  # summed over stored calls
    wall_s: float = 0.0
    max_in_flight: int = 0
    errors: list[str] = field(default_factory=list)
    endpoint_down: str | None = None  # the circuit breaker's one line, when it tripped
    batch: Any = None  # what the provider batches did (a voirdire.llm.batch.BatchStats), for a batch caller
    batch_pending: str | None = None  # batches still running when the wait ran out (their ids are kept)


class CallsIncomplete(RuntimeError):
    """Some calls failed for good; what succeeded is stored, a rerun asks only for the rest."""


class EndpointDown(CallsIncomplete):
    """The circuit breaker tripped: the endpoint answered nothing, many times in a row."""


class BatchPending(CallsIncomplete):
    """Provider batches were still running when the wait ran out; a rerun picks them up."""


@dataclass(frozen=True)
class Carried:
    """What a request already cost before it is asked directly: answers a batch gave that the
    caller's rule did not accept (each an attempt, paid for at the batch price)."""

    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


NOTHING_CARRIED = Carried()


@dataclass
class Breaker:
    """Counts connection failures (refused, unreachable, timed out) in a row; any answer resets it.
    Each failure is one request sent (nothing below the call path resends one)."""

    limit: int
    in_a_row: int = 0
    last_error: str = ""

    @property
    def tripped(self) -> bool:
        return self.in_a_row >= self.limit

    def record(self, error: BaseException | None, secret: str | None) -> None:
        if error is None:
            self.in_a_row = 0
        elif is_connection_failure(error):
            self.in_a_row += 1
            self.last_error = f"{type(error).__name__}: {redact(str(error), secret)}".splitlines()[0][:300]


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


def token_cost(litellm: Any, model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """Price from litellm's cost map; 0 for models it has no price for (see :func:`has_price`)."""
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # noqa: BLE001 - unknown model: no price, not an error
        return 0.0
    return float(prompt_cost + completion_cost)


def has_price(litellm: Any, model: str) -> bool:
    """Whether litellm's cost map prices ``model`` (else reported costs are 0 for lack of a price)."""
    try:
        litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
    except Exception:  # noqa: BLE001
        return False
    return True


@functools.cache
def _litellm() -> Any:
    return import_litellm()


def _is_local(model: str) -> bool:
    from .local.provider import is_local

    return is_local(model)


def _cost_map() -> str | None:
    """The cost map litellm prices by in this process, named so that a store can keep a model's
    price under it: the one bundled with the installed litellm (``LITELLM_LOCAL_MODEL_COST_MAP``,
    which :func:`~voirdire.llm.env.import_litellm` sets unless the user set it otherwise). None
    for a map fetched from the network when litellm is imported: it can change between runs, so a
    price by it is never kept."""
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True").lower() != "true":
        return None
    try:
        return f"litellm {importlib.metadata.version('litellm')} bundled"
    except importlib.metadata.PackageNotFoundError:
        return None


def price_known(model: str, store: Store | None = None) -> bool:
    """Whether ``model`` has a known price: litellm's cost map prices it, or it is the local
    model (free). A self-hosted model: no.

    ``store``: the caller's store, which keeps the answer once its calls were priced (or copied
    with answers from a finished store): read there first, so that a job that asks nothing does
    not import litellm (seconds) for it. When litellm is imported already, or the store cannot
    say, litellm is asked, and the answer kept in ``store``."""
    if _is_local(model):
        return True
    cost_map = _cost_map() if store is not None else None
    if cost_map is not None and "litellm" not in sys.modules:
        kept = store.price_known(model, cost_map)
        if kept is not None:
            return kept
    known = has_price(_litellm(), model)
    if cost_map is not None:
        store.keep_price_known(model, cost_map, known)
    return known


def estimated_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """What that many tokens cost at litellm's prices (0 for the local model); None when it
    has no price for ``model``."""
    if _is_local(model):
        return 0.0
    litellm = _litellm()
    if not has_price(litellm, model):
        return None
    return token_cost(litellm, model, prompt_tokens, completion_tokens)


def count_tokens(model: str, messages: list[dict]) -> int:
    """Prompt tokens of ``messages`` by ``model``'s tokenizer (litellm's ``token_counter``), or
    about 4 characters a token when litellm has no tokenizer for it."""
    try:
        return int(_litellm().token_counter(model=model, messages=messages))
    except Exception:  # noqa: BLE001 - no tokenizer for this model
        return sum(len(m["content"]) for m in messages) // 4


def _transport(model: str) -> tuple[Callable[..., Any], Callable[[int, int], float]]:
    """The coroutine that sends one request, and the price of (prompt, completion) tokens.

    The local model answers in this process without litellm, for free. An API is called
    through litellm, imported here (on the first call). A price is litellm's
    (:func:`token_cost`), asked once per run for each distinct pair of token counts: litellm
    walks its cost map on every ask (0.7 ms of CPU, a tenth of a call's).
    """
    if _is_local(model):
        from .local.provider import acompletion

        return acompletion, lambda prompt_tokens, completion_tokens: 0.0

    async def complete(**kwargs: Any) -> Any:
        return await _litellm().acompletion(**kwargs)

    prices: dict[tuple[int, int], float] = {}

    def cost(prompt_tokens: int, completion_tokens: int) -> float:
        tokens = (prompt_tokens, completion_tokens)
        if tokens not in prices:
            prices[tokens] = token_cost(_litellm(), model, prompt_tokens, completion_tokens)
        return prices[tokens]

    return complete, cost


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _record(call: Call, answer: Answer, verdict: Verdict, **ledger: Any) -> Record:
    request = call.request
    return Record(
        key=call.key,
        purpose=request.purpose,
        caller=call.caller,
        items=dict(call.items),
        sample=request.sample,
        model=request.model,
        model_version=answer.model_version,
        raw=answer.text,
        logprobs=answer.top_logprobs,
        status=OK if verdict.ok else UNPARSED,
        value=verdict.value,
        rule=verdict.rule,
        **ledger,
    )


def _reread(call: Call, old: Record, accept: Accept, **ledger: Any) -> Record:
    """A stored answer under ``call``'s key and ids, read again by ``accept``; its ledger kept
    unless ``ledger`` overrides a field."""
    answer = Answer.from_record(old)
    kept = {
        name: getattr(old, name)
        for name in ("attempts", "prompt_tokens", "completion_tokens", "cost", "latency_s", "created")
    }
    return _record(call, answer, accept(answer), **(kept | ledger))


def _adopt_aliases(calls: Sequence[Call], store: Store, accept: Accept) -> int:
    """Re-key answers stored under an older key of the same request; returns how many."""
    stored = {r.key: r for r in store.get(a for call in calls for a in call.aliases)}  # one batched read
    adopted = 0
    for call in calls:
        for alias in call.aliases:
            old = stored.get(alias)
            if old is None:
                continue
            adopted += store.adopt(alias, _reread(call, old, accept))
            break
    return adopted


def _copy_seeds(calls: Sequence[Call], store: Store, seeds: Sequence[str | Path], accept: Accept) -> int:
    """Copy answers of ``calls`` from other jobs' finished stores, under this job's ids."""
    found = store.copy_from(seeds, (c.key for c in calls))
    copied = 0
    for call in calls:
        old = found.get(call.key)
        if old is None:
            continue
        copied += store.put(_reread(call, old, accept, attempts=0, cost=0.0))
    if found:  # whether their model has a price, as the stores that priced them keep it (price_known)
        store.copy_prices_from(seeds)
    return copied


async def fill_store(
    endpoint: Endpoint,
    calls: Sequence[Call],
    store: Store,
    *,
    accept: Accept = accept_any,
    reasks: int = 0,
    max_in_flight: int | None = None,
    progress: bool = True,
    desc: str | None = None,
    transport_attempts: int | None = None,
    config_key: str | None = None,
    seeds: Sequence[str | Path] = (),
    batch: Any = None,
) -> RunStats:
    """Make every call that ``store`` lacks; never raises for a failed call (see ``stats.failed``).

    ``max_in_flight`` caps concurrency below the endpoint's (a job's share of the
    workflow-wide ``llm_slots``); ``transport_attempts``: sends of one request at most (default:
    the endpoint's ``num_retries`` + 1); ``config_key`` names the caller's config entry in errors;
    ``seeds`` are finished stores of other jobs whose answers to the same requests are copied
    (at cost 0) before anything is asked. ``batch`` (a :class:`voirdire.llm.batch.BatchOptions`)
    sends the calls to make as provider batches (its ``fill``: :func:`voirdire.llm.batch.fill_by_batch`);
    a judge's direct path passes :data:`voirdire.llm.batch.DIRECT`, which collects the batches an
    earlier batch run left unread first. A store with unread batches and no way to collect them
    asks nothing (``stats.batch_pending`` says why: :func:`call_all` raises :class:`BatchPending`).
    """
    started = time.perf_counter()
    stats = RunStats()
    unique = list({call.key: call for call in calls}.values())
    stats.calls = len(unique)
    have = store.existing(c.key for c in unique)
    missing = [c for c in unique if c.key not in have]
    stats.adopted = _adopt_aliases([c for c in missing if c.aliases], store, accept)
    if missing and seeds:
        stats.seeded = _copy_seeds(missing, store, seeds, accept)
    if stats.adopted or stats.seeded:
        have |= store.existing(c.key for c in missing)
        missing = [c for c in missing if c.key not in have]
    stats.cached = len(unique) - len(missing)
    log.info(
        "%s: %d calls, %d stored (%d re-keyed from an older release, %d copied from finished jobs), %d to make",
        desc or endpoint.model,
        stats.calls,
        stats.cached,
        stats.adopted,
        stats.seeded,
        len(missing),
    )
    if missing:
        options = {"accept": accept, "reasks": reasks, "progress": progress, "desc": desc}
        attempts = transport_attempts or endpoint.num_retries + 1
        options |= {"transport_attempts": attempts, "config_key": config_key}

        async def direct(calls: Sequence[Call], carried: Mapping[str, Carried] | None = None) -> None:
            await _call_missing(endpoint, calls, store, stats, max_in_flight=max_in_flight, carried=carried, **options)

        if batch is not None and not _is_local(endpoint.model):  # voirdire.llm.batch: fill_by_batch, or DIRECT
            await batch.fill(endpoint, missing, store, stats, direct=direct, **options)
        else:
            if unread := store.batches(unread=True):  # a batch run's batches, and a caller that cannot collect them
                stats.batch_pending = (
                    f"{desc or endpoint.model}: {len(unread)} provider batch(es) of an earlier run are not read "
                    f"({', '.join(str(r.batch_id or r.input_file_id) for r in unread)}; in {store.path}): nothing is "
                    "asked, so that none of their requests is paid twice; the judge's own job collects them first "
                    "(voirdire.llm.batch.DIRECT)"
                )
            else:
                await direct(missing)
    stats.wall_s = time.perf_counter() - started
    if stats.resent:  # each one a request the provider may have answered (and billed) before it failed here
        log.warning(
            "%s: %d request(s) sent again after a transport failure (%s)",
            desc or endpoint.model,
            sum(stats.resent.values()),
            ", ".join(f"{name} {count}" for name, count in sorted(stats.resent.items())),
        )
    return stats


async def _call_missing(
    endpoint: Endpoint,
    missing: Sequence[Call],
    store: Store,
    stats: RunStats,
    *,
    accept: Accept,
    reasks: int,
    max_in_flight: int | None,
    progress: bool,
    desc: str | None,
    transport_attempts: int,
    config_key: str | None,
    carried: Mapping[str, Carried] | None = None,
) -> None:
    """Ask each of ``missing`` directly; ``carried``: what a request's earlier, not accepted
    answers (from a batch) cost, counted in its attempts, tokens and cost."""
    complete, price = _transport(endpoint.model)
    carried = carried or {}
    secret = endpoint.api_key(key=config_key)
    connection = endpoint.connection(secret)
    slots = min(endpoint.concurrency, max_in_flight or endpoint.concurrency)
    semaphore = asyncio.Semaphore(slots)
    limiter = RateLimiter(endpoint.rpm)
    breaker = Breaker(endpoint.max_connection_failures)
    in_flight = 0
    tasks: list[asyncio.Task] = []

    from tqdm.auto import tqdm

    bar = tqdm(total=len(missing), desc=desc or endpoint.model, disable=not progress, unit="call")

    async def send(request: Request) -> Any:
        nonlocal in_flight
        for attempt in range(1, transport_attempts + 1):
            await limiter.wait()
            stats.requests += 1
            in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, in_flight)
            try:
                response = await complete(**request.body(), **connection)
            except Exception as exc:  # noqa: BLE001 - classified below
                breaker.record(exc, secret)
                if breaker.tripped:  # stop every call of this run now; what is stored stays
                    for task in tasks:
                        task.cancel()
                    raise
                if is_permanent(exc) or attempt == transport_attempts:
                    raise
                delay = retry_delay(exc, attempt)
                failure = type(exc).__name__
                stats.resent[failure] = stats.resent.get(failure, 0) + 1
            else:
                breaker.record(None, secret)
                return response
            finally:
                in_flight -= 1
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def one(call: Call) -> None:
        async with semaphore:
            started = time.perf_counter()
            before = carried.get(call.key, NOTHING_CARRIED)
            prompt_tokens = completion_tokens = attempts = 0
            # at least one ask, however many a batch's answers used up
            for attempts in range(before.attempts + 1, max(before.attempts, reasks) + 2):  # noqa: B007 - read after
                answer = Answer.from_response(await send(call.request))
                prompt_tokens += answer.prompt_tokens
                completion_tokens += answer.completion_tokens
                verdict = accept(answer)
                if verdict.ok:
                    break
            cost = price(prompt_tokens, completion_tokens)
            latency = time.perf_counter() - started
            record = _record(
                call,
                answer,
                verdict,
                attempts=attempts,
                prompt_tokens=before.prompt_tokens + prompt_tokens,
                completion_tokens=before.completion_tokens + completion_tokens,
                cost=before.cost + cost,
                latency_s=latency,
                created=time.time(),
            )
            stats.stored += store.put(record)
            stats.unparsed += not verdict.ok
            stats.prompt_tokens += prompt_tokens
            stats.completion_tokens += completion_tokens
            stats.cost += cost
            stats.latency_s += latency
            bar.update(1)

    tasks.extend(asyncio.ensure_future(one(c)) for c in missing)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    bar.close()
    for result in results:
        if isinstance(result, BaseException):
            stats.failed += 1
            if len(stats.errors) < 5 and not isinstance(result, asyncio.CancelledError):
                stats.errors.append(f"{type(result).__name__}: {redact(str(result), secret)}")
    if breaker.tripped:
        stats.endpoint_down = (
            f"{desc or endpoint.model}: endpoint {endpoint} is not answering: {breaker.in_a_row} "
            f"connection failures in a row and no success, so the job stopped ({stats.stored} "
            f"answers stored and kept). Last error: {breaker.last_error}"
        )


def call_all(endpoint: Endpoint, calls: Sequence[Call], store: Store, **options: Any) -> RunStats:
    """:func:`fill_store` from synchronous code; raises :class:`CallsIncomplete` if any call failed."""
    stats = asyncio.run(fill_store(endpoint, calls, store, **options))
    if stats.endpoint_down:
        raise EndpointDown(stats.endpoint_down)
    if stats.failed:
        raise CallsIncomplete(
            f"{stats.failed} of {stats.calls - stats.cached} calls to {endpoint} failed after "
            f"retries (stored: {stats.stored}; a rerun asks only for the missing ones). "
            "First errors: "
            + "; ".join(stats.errors)
            + (f" Also: {stats.batch_pending}" if stats.batch_pending else "")
        )
    if stats.batch_pending:
        raise BatchPending(stats.batch_pending)
    return stats


def answered(store: Store, calls: Sequence[Call]) -> set[str]:
    """Keys of ``calls`` that ``store`` answers, under the key or an alias (an older key of the
    request), read without re-keying anything."""
    have = store.existing(c.key for c in calls)
    aliased = store.existing(a for c in calls for a in c.aliases)  # one batched read
    return have | {c.key for c in calls if aliased.intersection(c.aliases)}


def records(store: Store, calls: Sequence[Call]) -> dict[str, Record]:
    """The stored answer of every call, by key (calls not stored are absent)."""
    return {record.key: record for record in store.get(c.key for c in calls)}


__all__ = [
    "Accept",
    "Answer",
    "BatchPending",
    "Call",
    "CallsIncomplete",
    "Carried",
    "EndpointDown",
    "RateLimiter",
    "RunStats",
    "Verdict",
    "accept_any",
    "answered",
    "call_all",
    "fill_store",
    "has_price",
    "records",
    "token_cost",
]
