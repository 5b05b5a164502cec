"""Inference with the local SmolLM2 model: greedy chat completions and next-token logprobs, batched.

Number format. The model runs in bfloat16 where the CPU has bfloat16 dot-product instructions
(``avx512_bf16`` or ``amx_bf16`` in ``/proc/cpuinfo``), about 2.5x faster than float32 on two
cores, and in float32 everywhere else; ``$VOIRDIRE_LOCAL_DTYPE`` (``auto``, ``float32``,
``bfloat16``) overrides the detection. :func:`number_format` says which one a process uses; the
LLM cache key (:class:`voirdire.llm.request.Request`) and the fingerprint record it, because the
two formats can give different answers.

Deterministic, and independent of what is batched together: decoding is greedy; every prompt is
left padded (attention mask, position ids derived from it) to the next multiple of
:data:`PAD_MULTIPLE` tokens, a width set by its own length alone, and only prompts of the same
width share a batch. In bfloat16 a prompt's logits then do not depend on its batch companions or
batch size at all (bit for bit, on the CPUs tested; on CPUs with AMX tiles only once oneDNN is
kept to AVX512-BF16 kernels, :func:`batch_invariant_kernels`): batched calls return exactly what
one-by-one calls return. In float32 they agree to about 1e-4 in a logit (the matrix kernels' summation order
depends on the batch size), which leaves greedy answers equal in practice. What neither format
promises is agreement with the other. torch and transformers are imported lazily.

Cores. A job given ``N`` threads (``$VOIRDIRE_TORCH_THREADS``) runs ``N`` batches at once, each
on one torch thread (:func:`streams`), rather than one batch on ``N`` threads: a 135M model's
matrices are too small for torch's intra-op threads to pay (measured on a 2-core AVX2 CPU: 64
judge prompts took 76 s on one thread, 50 s on two intra-op threads, 38 s as two streams).
A call's batches are then split so that every stream has one (:func:`_chunk_size`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...machine import cpu_flags
from .weights import model_dir

if TYPE_CHECKING:  # pragma: no cover - typing only
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

DEFAULT_MAX_TOKENS = 64
DEFAULT_BATCH_SIZE = 8
PAD_MULTIPLE = 32
"""Prompts are left padded to a multiple of this many tokens (at most 31 pad tokens each)."""
MIN_SHARED_PREFIX = 32
"""The shortest common prefix of a call's prompts that :func:`generate` computes only once."""
DTYPE_ENV = "VOIRDIRE_LOCAL_DTYPE"
DTYPES = ("float32", "bfloat16")
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
ONEDNN_ISA_ENV = "ONEDNN_MAX_CPU_ISA"
BATCH_INVARIANT_ISA = "AVX512_CORE_BF16"
"""oneDNN's instruction set for bfloat16 on CPUs with AMX tiles (see :func:`batch_invariant_kernels`)."""
ATEN_ISA_ENV = "ATEN_CPU_CAPABILITY"
ONEDNN_BF16_ISAS = frozenset(
    {
        "AVX512_CORE_BF16",
        "AVX512_CORE_FP16",
        "AVX10_1_512",
        "AVX512_CORE_AMX",
        "AVX10_1_512_AMX",
        "AVX512_CORE_AMX_FP16",
        "AVX10_1_512_AMX_FP16",
        "AVX10_2_512",
        "AVX10_2_512_AMX_2",
        "DEFAULT",
        "ALL",
    }
)
"""Values of ``$ONEDNN_MAX_CPU_ISA`` that leave oneDNN its bfloat16 dot-product instructions."""
TORCH_THREADS_ENV = "VOIRDIRE_TORCH_THREADS"
"""torch's thread count for the models of this process (a workflow job sets its Snakemake threads)."""

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


@functools.lru_cache(maxsize=1)
def cpu_bf16_flags(cpuinfo: str = "/proc/cpuinfo") -> tuple[str, ...]:
    """The CPU's bfloat16 dot-product flags (empty where there are none, or no ``/proc/cpuinfo``)."""
    flags = cpu_flags(cpuinfo)
    return tuple(flag for flag in BF16_CPU_FLAGS if flag in flags)


def bf16_kernels_capped() -> str | None:
    """The variable that keeps torch's kernels below the CPU's bfloat16 instructions, or None.

    ``$ONEDNN_MAX_CPU_ISA`` under ``AVX512_CORE_BF16`` (oneDNN's matrix products) or
    ``$ATEN_CPU_CAPABILITY`` other than an AVX-512 level (torch's own kernels), as a cluster's
    site settings or an emulation of an AVX2-only CPU set them: bfloat16 is then computed without
    its instructions, five times slower than float32 (32 demo prompts on one core of an AMD Zen 5,
    both variables at AVX2: 103 s against 18.6 s; docs/measured.md).
    """
    onednn = os.environ.get(ONEDNN_ISA_ENV, "").strip()
    if onednn and onednn.upper() not in ONEDNN_BF16_ISAS:
        return f"${ONEDNN_ISA_ENV}={onednn}"
    aten = os.environ.get(ATEN_ISA_ENV, "").strip()
    if aten and not aten.lower().startswith("avx512"):
        return f"${ATEN_ISA_ENV}={aten}"
    return None


def batch_invariant_kernels() -> None:
    """Keep oneDNN's bfloat16 kernels off AMX tiles, unless ``$ONEDNN_MAX_CPU_ISA`` says otherwise.

    On a CPU with AMX (Intel Xeon from Sapphire Rapids on), oneDNN computes bfloat16 products on
    tiles blocked by the batch's shape, and a prompt's answer then depends on how many prompts
    it is batched with (measured: greedy answers of the same prompts differ between batches of
    3 and of 8). With AVX512-BF16 kernels they do not. oneDNN reads the variable once, at its
    first use by any operation in the process (a float32 one too), so this runs when this module
    is imported and again before a model is loaded. AMX computes bfloat16 and int8 only, so the
    cap leaves float32 kernels as they were.
    """
    if "amx_bf16" in cpu_bf16_flags():
        os.environ.setdefault(ONEDNN_ISA_ENV, BATCH_INVARIANT_ISA)


batch_invariant_kernels()


def _choice() -> tuple[str, str]:
    """The number format and why: ``$VOIRDIRE_LOCAL_DTYPE``, or detected when unset/``auto``."""
    chosen = os.environ.get(DTYPE_ENV, "").strip().lower()
    if chosen not in ("", "auto"):
        if chosen not in DTYPES:
            raise ValueError(f"${DTYPE_ENV} is {chosen!r}; expected auto, float32 or bfloat16")
        return chosen, f"${DTYPE_ENV}={chosen}"
    flags = cpu_bf16_flags()
    if "amx_bf16" in flags:
        # bfloat16 must keep off AMX tiles to stay batch-invariant (batch_invariant_kernels), and so
        # kept it ran about half as fast as float32, which also computes a shared prefix once
        # (an Intel Xeon with AMX: 186 s against 88 s for the demo judge's prompts; docs/measured.md)
        return "float32", f"detected: CPU flags {', '.join(flags)}; float32 is faster where bfloat16 must keep off AMX"
    if flags and (capped := bf16_kernels_capped()):
        return "float32", f"detected: CPU flags {', '.join(flags)}, but {capped} keeps torch from them"
    if flags:
        return "bfloat16", f"detected: CPU flags {', '.join(flags)}"
    return "float32", "detected: no bfloat16 CPU flags"


def number_format() -> str:
    """``"bfloat16"`` or ``"float32"``: ``$VOIRDIRE_LOCAL_DTYPE``, or detected when unset/``auto``."""
    return _choice()[0]


def number_format_reason() -> str:
    """Why :func:`number_format` chose what it did (and the kernels it keeps to), for the
    fingerprint and the log."""
    chosen, reason = _choice()
    if chosen == "bfloat16" and "amx_bf16" in cpu_bf16_flags():
        reason += f"; oneDNN kept to {os.environ.get(ONEDNN_ISA_ENV, BATCH_INVARIANT_ISA)} (${ONEDNN_ISA_ENV})"
    return reason


def job_threads() -> int | None:
    """``$VOIRDIRE_TORCH_THREADS`` (a workflow job sets it to its Snakemake threads), or None."""
    threads = os.environ.get(TORCH_THREADS_ENV, "").strip()
    if not threads:
        return None
    if not threads.isdigit() or int(threads) < 1:
        raise ValueError(f"${TORCH_THREADS_ENV} is {threads!r}; expected a positive integer")
    return int(threads)


def use_job_threads() -> None:
    """``torch.set_num_threads($VOIRDIRE_TORCH_THREADS)`` when it is set; torch's default
    otherwise. For models with large matrices (the dense encoder); the local LLM uses
    :func:`streams` instead. Called before a model is loaded."""
    threads = job_threads()
    if threads:
        import torch

        torch.set_num_threads(threads)


def streams() -> int:
    """How many batches the local LLM computes at once: the job's threads, one torch thread
    each; 1 (on torch's default threads) outside a job."""
    return job_threads() or 1


def _use_stream_threads() -> None:
    """One torch thread per stream inside a job (see :func:`streams`)."""
    if job_threads():
        import torch

        torch.set_num_threads(1)


_load_lock = threading.Lock()
_slots_lock = threading.Lock()
_slots: dict[int, threading.BoundedSemaphore] = {}


@contextlib.contextmanager
def _forward_slot() -> Iterator[None]:
    """At most :func:`streams` forward passes at once in this process: the model is shared, and
    more passes than cores only fight for them."""
    count = streams()
    with _slots_lock:
        slot = _slots.setdefault(count, threading.BoundedSemaphore(count))
    with slot:
        yield


def _chunk_size(count: int, batch_size: int, lanes: int) -> int:
    """Prompts per batch for ``count`` prompts of one width: at most ``batch_size``, and small
    enough that ``lanes`` streams each get a batch when there are prompts for them all."""
    return max(1, min(batch_size, -(-count // lanes)))


def _each_batch(work: Callable[[Any], Any], batches: Sequence[Any]) -> list[Any]:
    """``work`` on every batch, :func:`streams` at a time, results in order."""
    lanes = min(streams(), len(batches))
    if lanes <= 1:
        return [work(batch) for batch in batches]
    with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="voirdire-local-stream") as pool:
        return list(pool.map(work, batches))


@functools.lru_cache(maxsize=4)
def _load_from(directory: str, dtype: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _use_stream_threads()
    batch_invariant_kernels()
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=getattr(torch, dtype), local_files_only=True)
    model.eval()
    logging.getLogger(__name__).info("local model %s in %s (%s)", directory, dtype, number_format_reason())
    return model, tokenizer


def load(
    cache_dir: str | Path | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The model (:func:`number_format`, eval mode, CPU) and its tokenizer (left padding), once per process.

    Converts the GGUF first if needed (see :func:`model_dir`). torch keeps its default thread
    count unless ``$VOIRDIRE_TORCH_THREADS`` is set: then it computes that many batches at once,
    each on one torch thread (:func:`streams`), which on a machine whose cores are busy with other
    work also avoids OpenMP threads waiting on each other.
    """
    directory = str(model_dir(cache_dir).resolve())
    with _load_lock:  # two threads' first calls must not load two copies
        return _load_from(directory, number_format())


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


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {size}")
    return [items[i : i + size] for i in range(0, len(items), size)]


def _encode(tokenizer: PreTrainedTokenizerBase, conversations: Sequence[Conversation]) -> list[list[int]]:
    """Token ids of each conversation under the chat template, with the generation prompt."""
    prompts = [
        tokenizer.apply_chat_template(_normalise(c), tokenize=False, add_generation_prompt=True) for c in conversations
    ]
    # The template already writes every special token, so add none.
    return list(tokenizer(prompts, add_special_tokens=False)["input_ids"])


def shared_prefix(encoded: Sequence[Sequence[int]]) -> int:
    """How many leading tokens :func:`generate` computes once for all of a call's prompts: their
    longest common prefix, when the call has two or more prompts, it is at least
    :data:`MIN_SHARED_PREFIX` tokens and the model runs in float32; 0 otherwise.

    Every prompt keeps at least one token of its own. Only in float32, where a prompt's logits
    already depend on its batch companions within about 1e-4; in bfloat16 they do not depend
    on them at all, and the prefix would make them do so.
    """
    if len(encoded) < 2 or number_format() != "float32":
        return 0
    shortest = min(len(ids) for ids in encoded) - 1
    length = 0
    first = encoded[0]
    while length < shortest and all(ids[length] == first[length] for ids in encoded):
        length += 1
    return length if length >= MIN_SHARED_PREFIX else 0


def _batches(
    tokenizer: PreTrainedTokenizerBase,
    conversations: Sequence[Conversation],
    size: int,
    *,
    encoded: Sequence[Sequence[int]] | None = None,
    prefix: int = 0,
) -> Iterator[tuple[Sequence[int], Any]]:
    """``(indices, batch)`` pairs: chat template with the generation prompt, left padded to the
    next multiple of :data:`PAD_MULTIPLE`, at most ``size`` prompts of one padded width a batch
    (fewer where that gives each of :func:`streams` a batch).

    With ``prefix``, each prompt's first ``prefix`` tokens (the same for all) stay in front,
    unpadded, and only the rest is padded and grouped by width: the batch's rows are the prefix,
    then the pads, then the prompt's own tokens (the attention mask skips the pads).
    """
    import torch

    if encoded is None:
        encoded = _encode(tokenizer, conversations)
    widths: dict[int, list[int]] = {}
    for index, ids in enumerate(encoded):
        widths.setdefault(-(-(len(ids) - prefix) // PAD_MULTIPLE), []).append(index)
    for _, indices in sorted(widths.items()):
        for chunk in _chunks(indices, _chunk_size(len(indices), size, streams())):
            rows = {"input_ids": [list(encoded[i][prefix:]) for i in chunk]}
            rows["attention_mask"] = [[1] * len(ids) for ids in rows["input_ids"]]
            batch = tokenizer.pad(rows, padding=True, pad_to_multiple_of=PAD_MULTIPLE, return_tensors="pt")
            if prefix:
                shared = torch.tensor([list(encoded[chunk[0]][:prefix])] * len(chunk), dtype=batch["input_ids"].dtype)
                batch = {
                    "input_ids": torch.cat([shared, batch["input_ids"]], dim=1),
                    "attention_mask": torch.cat([torch.ones_like(shared), batch["attention_mask"]], dim=1),
                }
            yield chunk, batch


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
    In float32 the prompts' common prefix is computed once (:func:`shared_prefix`).
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
    results: list[Generation | None] = [None] * len(conversations)
    encoded = _encode(tokenizer, conversations)
    prefix = shared_prefix(encoded)
    cached = None
    if prefix:
        # transformers 5 renames generate's past_key_values to cache (both work below 6, the
        # range pyproject.toml allows); the old name works across the range, so its notice is noise.
        warnings.filterwarnings("ignore", message=r".*past_key_values.*deprecated", category=FutureWarning)
        # The instruction text every prompt shares: its keys and values once, reused by each batch.
        with _forward_slot(), torch.inference_mode():
            cached = model(input_ids=torch.tensor([encoded[0][:prefix]]), use_cache=True).past_key_values

    def run(item: tuple[Sequence[int], Any]) -> list[tuple[int, Generation]]:
        indices, batch = item
        width = batch["input_ids"].shape[1]
        if len(indices) == 1:
            # A lone prompt decodes as two identical rows: one row per step is a matrix-vector
            # product, whose kernel sums in another order than the matrix-matrix one (in bf16
            # that changes answers); two rows take the same kernel as any larger batch.
            batch = {name: tensor.repeat(2, 1) for name, tensor in batch.items()}
        extra = {}
        if cached is not None:
            extra["past_key_values"] = reused = copy.deepcopy(cached)
            reused.batch_repeat_interleave(batch["input_ids"].shape[0])
        with _forward_slot(), torch.inference_mode():
            output = model.generate(**batch, **extra, generation_config=config)
        done = []
        for index, row, mask in zip(indices, output[:, width:].tolist(), batch["attention_mask"]):
            produced = row
            finish = "length"
            for i, token in enumerate(row):
                if token in stop:
                    produced, finish = row[: i + 1], "stop"
                    break
            text = tokenizer.decode(produced, skip_special_tokens=True)
            done.append((index, Generation(text, int(mask.sum()), len(produced), finish)))
        return done

    batches = list(_batches(tokenizer, conversations, batch_size, encoded=encoded, prefix=prefix))
    for done in _each_batch(run, batches):
        for index, generation in done:
            results[index] = generation
    return [r for r in results if r is not None]


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
    results: list[dict[str, float] | None] = [None] * len(conversations)

    def run(item: tuple[Sequence[int], Any]) -> tuple[Sequence[int], list[list[float]]]:
        indices, encoded = item
        batch = encoded.to(model.device)
        mask = batch["attention_mask"]
        # A plain forward pass does not derive positions from the mask (generate does), so with
        # left padding they must be given, or padded rows would see shifted positions.
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with _forward_slot(), torch.inference_mode():
            logits = model(
                input_ids=batch["input_ids"],
                attention_mask=mask,
                position_ids=positions,
                use_cache=False,
                logits_to_keep=2,  # two positions, so the head is a matrix product even for one prompt
            ).logits[:, -1, :]
        logprobs = torch.log_softmax(logits.float(), dim=-1)[:, index.to(logits.device)]
        return indices, logprobs.tolist()

    for indices, rows in _each_batch(run, list(_batches(tokenizer, conversations, batch_size))):
        for i, row in zip(indices, rows):
            results[i] = dict(zip(first, row))
    return [r for r in results if r is not None]
