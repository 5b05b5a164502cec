"""Prompt templates with ``{query}`` and ``{passage}`` slots; a template's hash joins every cache key."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Template:
    """A prompt template; :meth:`render` fills its slots into one user message."""

    text: str

    @classmethod
    def from_file(cls, path: str | Path) -> Template:
        return cls(Path(path).read_text(encoding="utf-8"))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, query: str, passage: str) -> list[dict[str, str]]:
        # str.replace, not str.format: templates may contain other braces (JSON examples)
        content = self.text.replace("{query}", query).replace("{passage}", passage)
        return [{"role": "user", "content": content}]
