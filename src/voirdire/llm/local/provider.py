"""The local model ``local/smollm2-135m`` as a chat-completion endpoint, two ways in.

* :func:`acompletion`: what the call path (:mod:`voirdire.llm.calls`) uses for a ``local/``
  model. It returns an OpenAI-shaped response without importing litellm: litellm's import
  (about 4 s of CPU) would be most of a small local job's start, and for a model in this
  process litellm has nothing to add (no HTTP, no provider retries, no price).
* The litellm provider: after :func:`register`, ``litellm.completion(model="local/smollm2-135m",
  messages=...)`` and ``litellm.acompletion(...)`` run on the same model, for code that calls
  litellm itself. litellm is imported on first use only.

Both answer from the same requests with the same :func:`~voirdire.llm.local.inference.generate`:
concurrent calls are micro-batched into one ``generate`` call, run in one worker thread off the
event loop, so the two give the same text and token counts.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .inference import DEFAULT_MAX_TOKENS, Generation, _normalise, generate, streams
from .weights import LITELLM_MODEL, MODEL_ID, PROVIDER

MICROBATCH_WAIT_S = 0.020
"""How long the litellm provider waits for more concurrent requests before running a batch."""
MICROBATCH_MAX = 32
"""The most concurrent litellm requests in one batch of the model; one :func:`generate` call
takes up to this many times :func:`~voirdire.llm.local.inference.streams` (it computes that many
batches at once)."""


@dataclass(frozen=True)
class _Request:
    messages: tuple[Any, ...]
    max_tokens: int
    cache_dir: str | None


def _run_requests(requests: Sequence[_Request]) -> list[Generation]:
    """Answer requests in order, one :func:`generate` call per (max_tokens, cache_dir) group."""
    groups: dict[tuple[int, str | None], list[int]] = {}
    for i, request in enumerate(requests):
        groups.setdefault((request.max_tokens, request.cache_dir), []).append(i)
    results: list[Generation | None] = [None] * len(requests)
    for (max_tokens, cache_dir), indices in groups.items():
        generations = generate(
            [list(requests[i].messages) for i in indices],
            max_tokens=max_tokens,
            batch_size=MICROBATCH_MAX,
            cache_dir=cache_dir,
        )
        for i, generation in zip(indices, generations):
            results[i] = generation
    return [r for r in results if r is not None]


_executor_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _worker() -> ThreadPoolExecutor:
    """One worker thread for all async generation: batches run in arrival order."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voirdire-local-llm")
        return _executor


def _most() -> int:
    """The most requests one :func:`generate` call takes: a batch for each stream."""
    return MICROBATCH_MAX * streams()


class _MicroBatcher:
    """Collects concurrent requests on one event loop and runs them as batches off the loop.

    A request waits at most :data:`MICROBATCH_WAIT_S` after the oldest pending request arrived
    (or until :func:`_most` are pending) before its batch starts; requests that arrive while a
    batch runs form the next one. The draining task exits when nothing is pending.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pending: deque[tuple[_Request, asyncio.Future[Generation], float]] = deque()
        self._task: asyncio.Task[None] | None = None

    async def submit(self, request: _Request) -> Generation:
        future: asyncio.Future[Generation] = self._loop.create_future()
        self._pending.append((request, future, self._loop.time()))
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        most = _most()
        while self._pending:
            wait = self._pending[0][2] + MICROBATCH_WAIT_S - self._loop.time()
            if len(self._pending) < most and wait > 0:
                await asyncio.sleep(wait)
            batch = []
            while self._pending and len(batch) < most:
                item = self._pending.popleft()
                if not item[1].done():  # skip callers that were cancelled while waiting
                    batch.append(item)
            if not batch:
                continue
            try:
                generations = await self._loop.run_in_executor(
                    _worker(), _run_requests, [request for request, _, _ in batch]
                )
            except asyncio.CancelledError:
                for _, future, _ in batch:
                    future.cancel()
                raise
            except Exception as error:  # noqa: BLE001 - handed to every caller in the batch
                for _, future, _ in batch:
                    if not future.done():
                        future.set_exception(error)
            else:
                for (_, future, _), generation in zip(batch, generations):
                    if not future.done():
                        future.set_result(generation)


_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _MicroBatcher] = weakref.WeakKeyDictionary()


def _batcher() -> _MicroBatcher:
    loop = asyncio.get_running_loop()
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = _MicroBatcher(loop)
    return batcher


def _max_tokens(optional_params: Mapping[str, Any] | None) -> int:
    params = optional_params or {}
    for key in ("max_tokens", "max_completion_tokens"):
        value = params.get(key)
        if value is not None:
            return int(value)
    return DEFAULT_MAX_TOKENS


def _fill_response(model_response: Any, generation: Generation, started: float) -> Any:
    """Write a :class:`Generation` into litellm's ``ModelResponse`` (content, usage, model)."""
    from litellm.types.utils import Usage

    choice = model_response.choices[0]
    choice.message.content = generation.text
    choice.finish_reason = generation.finish_reason
    model_response.model = LITELLM_MODEL
    model_response.created = int(started)
    model_response.usage = Usage(
        prompt_tokens=generation.prompt_tokens,
        completion_tokens=generation.completion_tokens,
        total_tokens=generation.prompt_tokens + generation.completion_tokens,
    )
    return model_response


class NotFoundError(LookupError):
    """A model name this provider does not serve (a permanent error to the call path)."""


class BadRequestError(ValueError):
    """Messages the model cannot take (a permanent error to the call path)."""


def _local_request(model: str, messages: Any, optional_params: Mapping[str, Any], cache_dir: str | None) -> _Request:
    """The request for ``model`` (``local/smollm2-135m`` or ``smollm2-135m``), or
    :class:`NotFoundError` / :class:`BadRequestError`."""
    name = model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model
    if name != MODEL_ID:
        raise NotFoundError(f"unknown local model {model!r}; have {MODEL_ID!r}")
    try:
        normalised = _normalise(messages)
    except (ValueError, KeyError, TypeError) as error:
        raise BadRequestError(str(error)) from error
    return _Request(tuple(normalised), _max_tokens(optional_params), cache_dir)


def is_local(model: str) -> bool:
    """Whether ``model`` names this provider's model (``local/...``)."""
    return model.startswith(f"{PROVIDER}/")


async def acompletion(*, model: str, messages: Any, **params: Any) -> dict[str, Any]:
    """One chat completion from the local model, as the OpenAI API shapes it (``choices``,
    ``usage``, ``model``), micro-batched with the other calls waiting on this event loop.

    ``max_tokens`` (or ``max_completion_tokens``) is honoured; sampling parameters are accepted
    and ignored (decoding is greedy), as the litellm provider does.
    """
    started = time.time()
    generation = await _batcher().submit(_local_request(model, messages, params, None))
    return {
        "model": LITELLM_MODEL,
        "created": int(started),
        "choices": [
            {"message": {"role": "assistant", "content": generation.text}, "finish_reason": generation.finish_reason}
        ],
        "usage": {
            "prompt_tokens": generation.prompt_tokens,
            "completion_tokens": generation.completion_tokens,
            "total_tokens": generation.prompt_tokens + generation.completion_tokens,
        },
    }


@functools.lru_cache(maxsize=1)
def _provider_class() -> type:
    """Define :class:`LocalLLM` on first use, because subclassing needs ``import litellm``."""
    from ..env import import_litellm

    litellm = import_litellm()
    from litellm.llms.custom_llm import CustomLLMError

    class LocalLLM(litellm.CustomLLM):  # type: ignore[misc, name-defined]
        """litellm ``CustomLLM`` answering ``local/smollm2-135m`` with :func:`generate`.

        ``max_tokens`` (or ``max_completion_tokens``) is honoured; sampling parameters such as
        ``temperature`` and ``top_p`` are accepted and ignored, since decoding is greedy.
        Streaming is not supported.
        """

        def __init__(self, cache_dir: str | Path | None = None) -> None:
            super().__init__()
            self.cache_dir = None if cache_dir is None else str(cache_dir)

        def _request(self, model: str, messages: list, optional_params: dict) -> _Request:
            try:
                return _local_request(model, messages, optional_params, self.cache_dir)
            except NotFoundError as error:
                raise CustomLLMError(status_code=404, message=str(error)) from error
            except BadRequestError as error:
                raise CustomLLMError(status_code=400, message=str(error)) from error

        # litellm passes every argument by keyword (see litellm.llms.custom_llm.CustomLLM);
        # the ones not needed here (api_base, api_key, logging_obj, timeout, ...) are ignored.
        def completion(  # type: ignore[override]
            self,
            model: str,
            messages: list,
            *,
            model_response: Any,
            optional_params: dict | None = None,
            **_unused: Any,
        ) -> Any:
            """Run one request now, in the calling thread."""
            started = time.time()
            request = self._request(model, messages, optional_params or {})
            (generation,) = _run_requests([request])
            return _fill_response(model_response, generation, started)

        async def acompletion(  # type: ignore[override]
            self,
            model: str,
            messages: list,
            *,
            model_response: Any,
            optional_params: dict | None = None,
            **_unused: Any,
        ) -> Any:
            """Queue the request for the next micro-batch; generation runs in a worker thread."""
            started = time.time()
            request = self._request(model, messages, optional_params or {})
            generation = await _batcher().submit(request)
            return _fill_response(model_response, generation, started)

    LocalLLM.__module__ = __name__
    LocalLLM.__qualname__ = "LocalLLM"
    return LocalLLM


@functools.lru_cache(maxsize=1)
def provider() -> Any:
    """The process-wide ``LocalLLM`` instance (a ``litellm.CustomLLM``); imports litellm."""
    return _provider_class()()


def register() -> None:
    """Make ``litellm.completion(model="local/smollm2-135m", ...)`` run on this model.

    Idempotent: adds ``{"provider": "local", "custom_handler": provider()}`` to
    ``litellm.custom_provider_map`` once (replacing any other handler registered as
    ``"local"``) and runs litellm's ``custom_llm_setup`` so the provider is known at once.
    """
    from ..env import import_litellm

    litellm = import_litellm()
    from litellm.utils import custom_llm_setup

    handler = provider()
    entries = litellm.custom_provider_map
    if not any(e.get("provider") == PROVIDER and e.get("custom_handler") is handler for e in entries):
        entries[:] = [e for e in entries if e.get("provider") != PROVIDER]
        entries.append({"provider": PROVIDER, "custom_handler": handler})
    custom_llm_setup()
    # Price it at zero so litellm's cost tracking works (and stays quiet) for local calls.
    if LITELLM_MODEL not in litellm.model_cost:
        litellm.register_model(
            {
                LITELLM_MODEL: {
                    "litellm_provider": PROVIDER,
                    "mode": "chat",
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "cache_creation_input_token_cost": 0.0,
                    "cache_read_input_token_cost": 0.0,
                    "max_input_tokens": 8192,
                    "max_output_tokens": 8192,
                }
            }
        )
