"""Where and how fast to call a model: one :class:`Endpoint` per judge, ranker or assistant.

The config keys users write (``model``, ``api_base``, ``api_key_env``, ``concurrency``,
``rpm``, ``timeout_s``, ``num_retries``) sit beside the caller's own keys; they are read
here once. Nothing in an endpoint enters a cache key: moving a judge from one proxy to
another, or raising its concurrency, reuses every stored answer.

``api_key_env`` names the environment variable holding the key. The key is read at call
time and handed to litellm only; it never enters the config, the store, a log or a result.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ConfigError
from .serve import ServeSpec

SERVED_KEY = "EMPTY"
"""What a served model is given as API key: vLLM started without ``--api-key`` takes any, but
litellm's OpenAI client insists on one. Not a secret."""

KEYS = (
    "model",
    "api_base",
    "api_key_env",
    "concurrency",
    "rpm",
    "timeout_s",
    "num_retries",
    "max_connection_failures",
    "serve",
)
"""The config keys an endpoint is read from (in a judge entry, or a ranker's)."""


@dataclass(frozen=True)
class Endpoint:
    """A litellm model string and how to reach it: base URL, key, concurrency, rate, retries."""

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    concurrency: int = 8
    rpm: float | None = None
    timeout_s: float = 60.0
    num_retries: int = 3
    """Resends of a request that failed in transit (429, 5xx, a timeout, a dropped connection), made
    with backoff by :func:`voirdire.llm.calls.fill_store`, each counted; permanent errors get none."""
    max_connection_failures: int = 20
    """The circuit breaker: this many connection failures or timeouts in a row, with no
    success, stop the job at once (a dead or hanging endpoint costs seconds, not hours)."""
    serve: ServeSpec | None = None
    """A model the workflow serves itself (:mod:`voirdire.llm.serve`); its caller's job learns
    ``api_base`` from the service when it starts (:meth:`at`)."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")

    def __str__(self) -> str:
        return self.model + (f" at {self.api_base}" if self.api_base else "")

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], *, key: str) -> Endpoint:
        """The endpoint keys of one config entry (``key`` names it in errors)."""
        if not entry.get("model") and not (entry.get("serve") or {}).get("model"):
            raise ConfigError("needs 'model' (a litellm model string)", key=f"{key}.model")
        if not entry.get("model"):  # a served model is called through its OpenAI-compatible API
            entry = {**entry, "model": f"openai/{entry['serve']['model']}"}
        if int(entry.get("num_retries", 3)) < 3:
            raise ConfigError("num_retries must be at least 3", key=f"{key}.num_retries")
        if int(entry.get("concurrency", 1)) < 1:
            raise ConfigError("concurrency must be at least 1", key=f"{key}.concurrency")
        values = {k: entry[k] for k in KEYS if entry.get(k) is not None}
        if entry.get("serve") is not None:
            if entry.get("api_base"):
                raise ConfigError("give either api_base or serve, not both", key=f"{key}.serve")
            values["serve"] = ServeSpec.from_config(entry["serve"], key=f"{key}.serve")
        return cls(**values)

    def at(self, api_base: str) -> Endpoint:
        """This endpoint, called at ``api_base`` (a served model's URL, known once it runs)."""
        return replace(self, api_base=api_base)

    @property
    def is_local(self) -> bool:
        """An in-process model (``local/...``) rather than an HTTP API."""
        return self.model.startswith("local/")

    def api_key(self, *, key: str | None = None) -> str | None:
        """The key from the environment (None when no variable is named); ``key`` names the config entry."""
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ConfigError(
                f"environment variable {self.api_key_env} (the API key of {self.model}) is not set; "
                "export it before running",
                key=f"{key}.api_key_env" if key else "api_key_env",
            )
        return value

    def connection(self, api_key: str | None) -> dict[str, Any]:
        """litellm's connection arguments: never part of a cache key, never stored.

        No retry below us: litellm's ``num_retries`` and the provider SDK's ``max_retries`` are
        both 0, so each request litellm sends is one this package counted
        (:func:`voirdire.llm.calls.fill_store` makes this endpoint's ``num_retries`` itself, with
        backoff). A retry inside the SDK or litellm's wrapper would resend a request whose answer
        was lost on the way back (a timeout, a dropped connection, an error after the response)
        and the provider would bill it twice, out of sight of the ledger.
        """
        kwargs: dict[str, Any] = {"timeout": self.timeout_s, "num_retries": 0, "max_retries": 0}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if api_key is not None:
            kwargs["api_key"] = api_key
        elif self.serve is not None:
            kwargs["api_key"] = SERVED_KEY
        return kwargs
