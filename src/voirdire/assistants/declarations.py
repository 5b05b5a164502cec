"""What an assistant is: a model that rewrites passages for the Assistants experiment.

An assistant is either a live model (any litellm model string, or ``local/smollm2-135m``
offline) asked zero-shot with the paper's prompt, "Please rewrite the following text:"
followed by the passage, or a *recorded* one: precomputed rewrites read from a file (a
BEIR-style JSONL corpus such as the Cocktail benchmark's, or ``id<TAB>text``). Each
assistant defines one provenance, ``rewritten-{name}``: the same pairs with the sampled
passages' texts replaced by their rewrites.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..defaults import filled, schema_default
from ..errors import ConfigError
from ..llm.endpoint import Endpoint
from ..prompts import path as prompt_path

ORIGINAL = "original"
REWRITE_PROMPT = prompt_path("rewrite.txt")
"""The zero-shot prompt of Balog, Metzler & Qin (SIGIR 2025, §4.3), with a ``{passage}`` slot."""


def provenance_of(assistant: str) -> str:
    return f"rewritten-{assistant}"


@dataclass(frozen=True)
class LLMAssistant:
    name: str
    endpoint: Endpoint
    prompt_file: Path = REWRITE_PROMPT
    # the schema's defaults (a float as a float: a request's body, its cache key, reads it as given)
    temperature: float = float(schema_default("assistants", "temperature"))
    max_tokens: int = schema_default("assistants", "max_tokens")
    seed: int | None = schema_default("assistants", "seed")
    family: str | None = None
    threads: int = schema_default("assistants", "threads")  # CPU threads of its job (a local model's torch threads)
    kind: str = "llm"

    @property
    def model(self) -> str:
        return self.endpoint.model

    @property
    def provenance(self) -> str:
        return provenance_of(self.name)


@dataclass(frozen=True)
class RecordedAssistant:
    name: str
    rewrites: Path
    family: str | None = None
    kind: str = "recorded"

    @property
    def provenance(self) -> str:
        return provenance_of(self.name)


Assistant = LLMAssistant | RecordedAssistant


def assistant_from_config(name: str, entry: dict, *, key: str, prompt: Path = REWRITE_PROMPT) -> Assistant:
    """One entry of the config's ``assistants`` mapping (``key`` names it in errors); ``prompt`` is
    the template when the entry gives no ``prompt_file``. The schema's defaults are filled in
    where the entry leaves a key out, as validating the config fills them."""
    entry = filled(entry, "assistants")
    family = entry.get("family")
    if entry["kind"] == "recorded":
        if "rewrites" not in entry:
            raise ConfigError("a recorded assistant needs 'rewrites' (JSONL or TSV)", key=f"{key}.rewrites")
        if not Path(entry["rewrites"]).is_file():
            raise ConfigError(f"file not found: {entry['rewrites']}", key=f"{key}.rewrites")
        return RecordedAssistant(name=name, rewrites=Path(entry["rewrites"]), family=family)
    endpoint = Endpoint.from_config(entry, key=key)
    prompt = Path(entry.get("prompt_file", prompt))
    if not prompt.is_file():
        raise ConfigError(f"file not found: {prompt}", key=f"{key}.prompt_file")
    if "{passage}" not in prompt.read_text(encoding="utf-8"):
        raise ConfigError(f"{prompt}: the template has no {{passage}} slot", key=f"{key}.prompt_file")
    own = {k: entry[k] for k in ("temperature", "max_tokens", "seed", "threads")}
    return LLMAssistant(name=name, endpoint=endpoint, prompt_file=prompt, family=family, **own)
