"""Pointwise T5 rerankers: RankT5 and monoT5 scores for (query, passage) pairs.

Two encoder-decoder rerankers of "Rankers, Judges, and Assistants" (Balog, Metzler & Qin,
SIGIR 2025), both scored with a single decoder step:

* **monoT5** -- Nogueira, Jiang, Pradeep & Lin, "Document Ranking with a Pretrained
  Sequence-to-Sequence Model", Findings of EMNLP 2020. Input
  ``"Query: {q} Document: {d} Relevant:"``; the model was fine-tuned to emit ``true`` or
  ``false``. The score is the log-probability of ``true`` after a softmax restricted to the two
  logits of ``true`` and ``false`` at the first decoder step (a value <= 0).
* **RankT5** -- Zhuang, Qin, Jagerman, Hui, Ma, Lu, Ni, Wang & Bendersky, "RankT5:
  Fine-Tuning T5 for Text Ranking with Ranking Losses", SIGIR 2023. Encoder-decoder variant:
  input ``"Query: {q} Document: {d}"``; the ranking score is the unnormalised logit of one
  reserved vocabulary token, ``<extra_id_10>``, at the first decoder step (the token the
  released checkpoints, e.g. ``Soyoung97/RankT5-3b``, were trained on).

Batches are sorted by input length (longest first) to reduce padding, padded on the right with
an attention mask, and the scores are returned in input order. Scoring is deterministic, and a
batched score equals the one-by-one score up to floating-point noise.

torch and transformers are imported lazily; the model and tokenizer are loaded once per process
(:data:`_CACHE`, keyed by ``(model, device, dtype)``).

Half precision: ``dtype="auto"`` picks bfloat16 on CUDA. Avoid ``float16`` with original T5
checkpoints -- their activations are known to overflow in fp16 (inf/NaN scores).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    import torch
    from transformers import PreTrainedTokenizerBase, T5ForConditionalGeneration

KINDS = ("rankt5", "monot5")
"""Supported scorer kinds."""

DTYPES = ("auto", "float32", "bfloat16", "float16")
"""Accepted ``dtype`` values; ``"auto"`` is bfloat16 on CUDA and float32 elsewhere."""

RANKT5_SCORE_TOKEN = "<extra_id_10>"
"""The token whose first-step logit is the RankT5 ranking score."""

MONOT5_TRUE = "true"
MONOT5_FALSE = "false"
"""The monoT5 target words; the score uses the first sub-token of each."""

_CACHE: dict[tuple[str, str, str], tuple[Any, Any]] = {}
_CACHE_LOCK = threading.Lock()


def format_input(kind: str, query: str, passage: str) -> str:
    """The model input for one pair: RankT5 ``"Query: q Document: d"``; monoT5 adds ``" Relevant:"``."""
    if kind == "rankt5":
        return f"Query: {query} Document: {passage}"
    if kind == "monot5":
        return f"Query: {query} Document: {passage} Relevant:"
    raise ValueError(f"unknown T5 scorer kind {kind!r}; expected one of {KINDS}")


def resolve_device(device: str | None) -> str:
    """``device``, or ``"cuda"`` when available and ``"cpu"`` otherwise."""
    if device is not None:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_dtype(dtype: str, device: str) -> str:
    """The concrete dtype name: ``"auto"`` is bfloat16 on CUDA devices, float32 elsewhere."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {DTYPES}")
    if dtype == "auto":
        return "bfloat16" if device.startswith("cuda") else "float32"
    return dtype


def load(model: str, device: str, dtype: str) -> tuple[T5ForConditionalGeneration, PreTrainedTokenizerBase]:
    """The model (eval mode, on ``device``, in ``dtype``) and its tokenizer, loaded once per process.

    ``device`` and ``dtype`` must be concrete (see :func:`resolve_device`, :func:`resolve_dtype`).
    """
    key = (model, device, dtype)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        import torch
        from transformers import AutoTokenizer, T5ForConditionalGeneration

        torch_dtype = getattr(torch, dtype)
        tokenizer = AutoTokenizer.from_pretrained(model)
        loaded = T5ForConditionalGeneration.from_pretrained(model, dtype=torch_dtype)
        loaded.to(device)
        loaded.eval()
        _CACHE[key] = (loaded, tokenizer)
        return loaded, tokenizer


def clear_cache() -> None:
    """Forget every loaded model (frees its memory once no scorer holds a reference)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def first_token_id(tokenizer: PreTrainedTokenizerBase, text: str) -> int:
    """The id of ``text``'s first sub-token (no special tokens; a lone leading "▁" is skipped)."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    if len(ids) > 1 and tokenizer.convert_ids_to_tokens(ids[0]) == "▁":
        ids = ids[1:]
    if not ids:
        raise ValueError(f"{text!r} does not tokenise to any token")
    if ids[0] == tokenizer.unk_token_id:
        raise ValueError(f"{text!r} tokenises to the unknown token")
    return int(ids[0])


@dataclass(frozen=True)
class T5Scorer:
    """Pointwise RankT5 / monoT5 relevance scores (see the module docstring for the papers).

    ``model`` is a Hugging Face id or a local directory. ``kind`` is ``"rankt5"`` (score: the
    first-step logit of ``score_token``, default ``<extra_id_10>``) or ``"monot5"`` (score: the
    log-probability of ``true`` against ``false``, <= 0). Inputs longer than ``max_length``
    tokens are truncated (the end-of-sequence token is kept).
    """

    model: str
    kind: str
    batch_size: int = 16
    max_length: int = 512
    device: str | None = None
    dtype: str = "auto"
    score_token: str | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown T5 scorer kind {self.kind!r}; expected one of {KINDS}")
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}; expected one of {DTYPES}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.max_length < 2:
            raise ValueError(f"max_length must be >= 2, got {self.max_length}")
        if self.score_token is not None and self.kind != "rankt5":
            raise ValueError("score_token applies to kind='rankt5' only")

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Scores of ``passages`` for ``query``, in the order given (higher: more relevant)."""
        return self.score_pairs([(query, passage) for passage in passages])

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Scores of ``(query, passage)`` pairs, in the order given, computed in length-sorted batches."""
        if not pairs:
            return []
        import torch
        from tqdm.auto import tqdm

        device = resolve_device(self.device)
        model, tokenizer = load(self.model, device, resolve_dtype(self.dtype, device))
        token_ids = self._token_ids(tokenizer)

        texts = [format_input(self.kind, query, passage) for query, passage in pairs]
        encoded = tokenizer(texts, truncation=True, max_length=self.max_length, add_special_tokens=True)["input_ids"]
        # longest first; ties keep input order, so the batching is deterministic
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        start = model.config.decoder_start_token_id
        if start is None:
            start = model.config.pad_token_id
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        select = torch.tensor(token_ids, device=device)

        scores: list[float] = [0.0] * len(encoded)
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        with torch.inference_mode():
            for batch in tqdm(batches, desc=f"{self.kind} batches", disable=not self.progress):
                input_ids, attention_mask = _pad([encoded[i] for i in batch], pad, device)
                decoder_input_ids = torch.full((len(batch), 1), start, dtype=torch.long, device=device)
                logits = model(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    decoder_input_ids=decoder_input_ids,
                    use_cache=False,
                ).logits[:, 0, :]
                chosen = logits.index_select(1, select).float()
                if self.kind == "monot5":
                    values = torch.log_softmax(chosen, dim=1)[:, 0]
                else:
                    values = chosen[:, 0]
                for i, value in zip(batch, values.tolist(), strict=True):
                    scores[i] = float(value)
        return scores

    def _token_ids(self, tokenizer: PreTrainedTokenizerBase) -> list[int]:
        """monoT5: ``[true, false]`` ids; RankT5: ``[score token]`` id."""
        if self.kind == "monot5":
            return [first_token_id(tokenizer, MONOT5_TRUE), first_token_id(tokenizer, MONOT5_FALSE)]
        return [first_token_id(tokenizer, self.score_token or RANKT5_SCORE_TOKEN)]


def _pad(rows: list[list[int]], pad: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token id lists into ``input_ids`` and ``attention_mask`` tensors."""
    import torch

    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for j, row in enumerate(rows):
        input_ids[j, : len(row)] = torch.tensor(row, dtype=torch.long)
        attention_mask[j, : len(row)] = 1
    return input_ids.to(device), attention_mask.to(device)
