"""Language models for logit-based ranking (RG, PRP) with transformers.

Decoder-only chat models read the next-token distribution after the chat template's
generation prompt; encoder-decoder models (FLAN-T5, FLAN-UL2: the paper's RG and PRP
rankers) read the first decoder step after encoding the prompt text.

``local/smollm2-135m`` is the offline model of the judging engine (same loader, same weights).
Any other name is a Hugging Face id or a local path, loaded once per process with
``device_map`` (GPU: bf16 by default; CPU: float32), a left-padding tokenizer and the chat
template. Scoring uses :func:`voirdire.llm.local.logprobs_with`: batched, left padding with
position ids derived from the attention mask, so batched scores equal one-by-one scores.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ..llm import local as local_llm


@functools.lru_cache(maxsize=2)
def load(model: str, dtype: str = "auto", device_map: str | None = None) -> tuple[Any, Any]:
    """Model and tokenizer for ``model``: the local SmolLM2, or a transformers causal LM."""
    if model == local_llm.LITELLM_MODEL:
        return local_llm.load()
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    cuda = torch.cuda.is_available()
    torch_dtype = {
        "auto": torch.bfloat16 if cuda else torch.float32,
        "float32": torch.float32,
        "bfloat16": torch.bfloat16,
        "float16": torch.float16,
    }[dtype]
    tokenizer = AutoTokenizer.from_pretrained(model)
    encoder_decoder = AutoConfig.from_pretrained(model).is_encoder_decoder
    tokenizer.padding_side = "right" if encoder_decoder else "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    loader = AutoModelForSeq2SeqLM if encoder_decoder else AutoModelForCausalLM
    loaded = loader.from_pretrained(model, dtype=torch_dtype, device_map=device_map or ("auto" if cuda else None))
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
    if model == local_llm.LITELLM_MODEL:
        return local_llm.next_token_logprobs(conversations, candidates, batch_size=batch_size)
    loaded, tokenizer = load(model, dtype)
    if loaded.config.is_encoder_decoder:
        return seq2seq_logprobs(loaded, tokenizer, conversations, candidates, batch_size=batch_size)
    return local_llm.logprobs_with(loaded, tokenizer, conversations, candidates, batch_size=batch_size)


def seq2seq_logprobs(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[list[dict[str, str]]],
    candidates: Sequence[str],
    *,
    batch_size: int = 8,
    max_length: int = 512,
) -> list[dict[str, float]]:
    """First-decoder-step log-probabilities of each candidate's first token (FLAN-T5 style).

    The prompt is the conversation's text (messages joined by blank lines; no chat template).
    """
    import torch

    first = {c: tokenizer.encode(c, add_special_tokens=False)[0] for c in candidates}
    index = torch.tensor(list(first.values()))
    start = model.config.decoder_start_token_id
    texts = ["\n\n".join(m["content"] for m in conversation) for conversation in conversations]
    results: list[dict[str, float]] = []
    for begin in range(0, len(texts), batch_size):
        batch = tokenizer(
            texts[begin : begin + batch_size], return_tensors="pt", padding=True, truncation=True, max_length=max_length
        ).to(model.device)
        decoder = torch.full((batch["input_ids"].shape[0], 1), start, device=model.device)
        with torch.inference_mode():
            logits = model(**batch, decoder_input_ids=decoder, use_cache=False).logits[:, 0, :]
        logprobs = torch.log_softmax(logits.float(), dim=-1)[:, index.to(logits.device)]
        results.extend(dict(zip(first, row)) for row in logprobs.tolist())
    return results
