"""One request value that is both the cache key and the call.

A :class:`Request` holds exactly the body that is sent (model, messages, sampling
parameters) plus what decides how its answer is read: a purpose tag (``judge``, ``rank``,
``rewrite``, ``probe``, ...), the prompt template's hash, the sample index and the name of
the acceptance rule. :attr:`Request.key` hashes all of it; :meth:`Request.body` is what
:mod:`voirdire.llm.calls` passes to litellm, and nothing else is ever sent. So the key and
the call cannot drift apart.

One more thing decides an answer of the in-process local model (``local/...``): the number
format it runs in (:func:`voirdire.llm.local.inference.number_format`). Its bfloat16 answers are
keyed apart from its float32 ones, so a store filled on one kind of CPU is never read as the
other's answers; float32 keys are the keys earlier releases wrote.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

PURPOSES = ("judge", "rank", "rewrite", "probe")
LOCAL_PREFIX = "local/"

Messages = tuple[tuple[str, str], ...]


def canonical_hash(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Request:
    """A chat completion request: what is sent, and what its stored answer means."""

    purpose: str
    model: str
    messages: Messages
    params: tuple[tuple[str, Any], ...] = ()
    template_sha256: str | None = None
    sample: int = 0
    accept: str = ""

    def __post_init__(self) -> None:
        if self.purpose not in PURPOSES:
            raise ValueError(f"unknown purpose {self.purpose!r}; expected one of {PURPOSES}")

    @classmethod
    def chat(
        cls,
        purpose: str,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        template_sha256: str | None = None,
        sample: int = 0,
        accept: str = "",
        **params: Any,
    ) -> Request:
        """Build a request; parameters that are None are not sent (and so not hashed)."""
        return cls(
            purpose=purpose,
            model=model,
            messages=tuple((m["role"], m["content"]) for m in messages),
            params=tuple(sorted((k, v) for k, v in params.items() if v is not None)),
            template_sha256=template_sha256,
            sample=sample,
            accept=accept,
        )

    def chat_messages(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]

    def body(self) -> dict[str, Any]:
        """Exactly what is sent to the model: model, messages and sampling parameters."""
        return {"model": self.model, "messages": self.chat_messages(), **dict(self.params)}

    @property
    def numerics(self) -> str | None:
        """The local model's number format when it is not float32; None for any other model."""
        if not self.model.startswith(LOCAL_PREFIX):
            return None
        from .local.inference import number_format

        chosen = number_format()
        return None if chosen == "float32" else chosen

    @cached_property
    def key(self) -> str:
        """SHA-256 of the body plus purpose, template hash, sample index and acceptance rule
        (and the local model's number format, when it is not float32)."""
        keyed: dict[str, Any] = {
            "body": self.body(),
            "purpose": self.purpose,
            "template_sha256": self.template_sha256,
            "sample": self.sample,
            "accept": self.accept,
        }
        if numerics := self.numerics:
            keyed["numerics"] = numerics
        return canonical_hash(keyed)
