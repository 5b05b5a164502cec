"""Decoder-only language models for logit-based ranking (RG, PRP) with transformers.

``local/smollm2-135m`` is the offline model of the judging engine (same loader, same weights).
Any other name is a Hugging Face id or a local path, loaded once per process with
``device_map`` (GPU: bf16 by default; CPU: float32), a left-padding tokenizer and the chat
template. Scoring uses :func:`voirdire.local_llm.logprobs_with`: batched, left padding with
position ids derived from the attention mask, so batched scores equal one-by-one scores.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from .. import local_llm

DTYPES = ("auto", "float32", "bfloat16", "float16")


@functools.lru_cache(maxsize=2)
def load(model: str, dtype: str = "auto", device_map: str | None = None) -> tuple[Any, Any]:
    """Model and tokenizer for ``model``: the local SmolLM2, or a transformers causal LM."""
    if model == local_llm.LITELLM_MODEL:
        return local_llm.load()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cuda = torch.cuda.is_available()
    torch_dtype = {
        "auto": torch.bfloat16 if cuda else torch.float32,
        "float32": torch.float32,
        "bfloat16": torch.bfloat16,
        "float16": torch.float16,
    }[dtype]
    tokenizer = AutoTokenizer.from_pretrained(model)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    loaded = AutoModelForCausalLM.from_pretrained(
        model, dtype=torch_dtype, device_map=device_map or ("auto" if cuda else None)
    )
    loaded.eval()
    return loaded, tokenizer


def candidate_logprobs(
    model: str,
    conversations: Sequence[list[dict[str, str]]],
    candidates: Sequence[str],
    *,
    batch_size: int = 8,
    dtype: str = "auto",
) -> list[dict[str, float]]:
    """Next-token log-probabilities of each candidate's first token, per conversation."""
    loaded, tokenizer = load(model, dtype)
    return local_llm.logprobs_with(
        loaded, tokenizer, conversations, candidates, batch_size=batch_size
    )
