"""What the input functions of every stage share: wildcard regexes, LLM slots, served models, name-keyed inputs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..jobscript import named


def one_of(names: Iterable[str]) -> str:
    """A wildcard regex matching exactly these names."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def llm_slots(endpoint) -> int:
    """A job's share of the workflow-wide cap on LLM calls in flight (`--resources llm_slots=N`).

    Snakemake lowers a job's value to the global cap when the cap is smaller; the job then
    keeps at most that many calls in flight (it reads its granted value back). A model the
    workflow serves itself has no provider's rate limit to respect: its callers take no slot
    (they run together with their server, and the group must fit the cap) and keep
    `concurrency` calls in flight. Nor has the local model, which runs inside the job's own
    process (`local/...`): its job keeps `concurrency` prompts waiting to be batched."""
    if endpoint is None or endpoint.serve is not None or endpoint.is_local:
        return 0
    return endpoint.concurrency


def served_spec(owner):
    """How a judge's or ranker's model is served, or None (an API, a local model, no model)."""
    endpoint = getattr(owner, "endpoint", None)
    return endpoint.serve if endpoint is not None else None


def caller_threads(owner) -> int:
    """A job's CPU threads: the owner's own where its model runs inside the job (``local/...``, an
    embedding model, no model), 1 where the job only sends requests (an API, a served model). A
    caller is one Python thread waiting on sockets: given the owner's two threads it would keep a
    second core idle, and four API judges on a two-core machine would run one after the other."""
    endpoint = getattr(owner, "endpoint", None)
    if endpoint is not None and not endpoint.is_local:
        return 1
    return getattr(owner, "threads", 1)  # a recorded assistant: no model, no threads of its own


def named_inputs(**functions: Callable) -> Callable:
    """A rule's name-keyed inputs from input functions that return nested structures
    (name -> file, or name -> list of files): each file declared once (voirdire.jobscript.named); the
    script reads them back with voirdire.jobscript.grouped(snakemake.input)."""

    def inputs(wildcards):
        return named(**{group: function(wildcards) for group, function in functions.items()})

    return inputs
