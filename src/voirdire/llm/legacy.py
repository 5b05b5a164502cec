"""Compatibility with voirdire 0.1: the keys it gave its calls and the table it stored them in.

Kept through the 0.x series and removed in 1.0 (:data:`REMOVED_IN`). Everything voirdire
knows of 0.1 is here; the rest of the code calls into this module and nowhere else:

* :func:`judge_key` and :func:`ranker_key` spell a request's key as 0.1 did. The judge's and
  the ranker's calls pass it as an *alias* (:class:`~voirdire.llm.calls.Call`), the generic
  mechanism by which an answer stored under an older key answers today's request: the
  first lookup re-keys the row (:meth:`~voirdire.llm.store.Store.adopt`), so paid answers
  are never asked for again. Job summaries count those rows as ``rekeyed_from_v0_1``.
* :func:`migrate` moves 0.1's table ``judgments`` into today's ``calls`` when a store is
  opened: its rows keep their old keys (until adopted), and the old table is kept, renamed
  ``judgments_v0_1``; the store's ``meta`` records ``migrated_from = 0.1``.

Removing it in 1.0 means: this module, the ``legacy`` use in :mod:`voirdire.llm_judge.tasks`
and :mod:`voirdire.rankers.api`, the call to :func:`migrate` in :class:`~voirdire.llm.store.Store`,
and the tests of ``tests/data/store-v0.1/``. Aliases stay (they are not 0.1's).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any, Protocol

from .request import canonical_hash

VERSION = "0.1"
"""The release whose keys and table this module reads."""
REMOVED_IN = "1.0"
"""The release that drops this module (kept through the 0.x series)."""

OLD_TABLE = "judgments"
"""0.1's one table: one row per call."""
KEPT_AS = "judgments_v0_1"
"""What the old table is renamed to once its rows are moved (nothing is deleted)."""


class _Scale(Protocol):
    low: int
    high: int


class _Judge(Protocol):
    """What :func:`judge_key` reads of an LLM judge (:class:`voirdire.judges.LLMJudge`)."""

    model: str
    temperature: float
    top_p: float | None
    max_tokens: int
    seed: int | None
    scale: _Scale


def judge_key(judge: _Judge, messages: list[dict], sample: int, template_sha256: str) -> str:
    """How voirdire 0.1 keyed a judge's grading call (so its stores answer today's requests)."""
    return canonical_hash(
        {
            "model": judge.model,
            "messages": messages,
            "temperature": judge.temperature,
            "top_p": judge.top_p,
            "max_tokens": judge.max_tokens,
            "seed": judge.seed,
            "sample": sample,
            "template_sha256": template_sha256,
            "scale": [judge.scale.low, judge.scale.high],
        }
    )


def ranker_key(model: str, params: Mapping[str, Any], messages: list[dict], method: str) -> str:
    """How voirdire 0.1 keyed a ranker's call: ``method`` 'rg' or 'prp', ``params`` the
    sampling parameters sent with it."""
    return canonical_hash({"model": model, **params, "messages": messages, "purpose": method})


# 0.1 kept one row per call in `judgments`; ranker rows had empty query and passage ids and
# a JSON raw answer {"text", "top_logprobs"}. Everything it knew moves over.
MIGRATE = f"""
INSERT OR IGNORE INTO calls
SELECT key,
       CASE WHEN query_id = '' AND doc_id = '' THEN 'rank' ELSE 'judge' END,
       judge,
       CASE WHEN query_id = '' AND doc_id = '' THEN '{{}}'
            ELSE json_object('query_id', query_id, 'doc_id', doc_id, 'provenance', provenance) END,
       sample, model, model_version,
       CASE WHEN query_id = '' AND doc_id = '' AND json_valid(raw) THEN json_extract(raw, '$.text') ELSE raw END,
       CASE WHEN query_id = '' AND doc_id = '' AND json_valid(raw) THEN json_extract(raw, '$.top_logprobs') END,
       status,
       CASE WHEN label IS NULL THEN NULL ELSE CAST(label AS TEXT) END,
       parse_rule, attempts, prompt_tokens, completion_tokens, cost, latency_s, created
FROM {OLD_TABLE}
"""


def found(db: sqlite3.Connection) -> bool:
    """Whether the store holds 0.1's table, not yet migrated."""
    query = "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name=?"
    return bool(db.execute(query, (OLD_TABLE,)).fetchone()[0])


def migrate(db: sqlite3.Connection) -> int:
    """Move 0.1's table into ``calls`` (keys unchanged), keep it renamed :data:`KEPT_AS` and
    record ``migrated_from`` in ``meta``; returns the rows moved.

    Call it inside a write transaction (``BEGIN IMMEDIATE``) of a store whose ``calls`` and
    ``meta`` tables exist. The table is looked for again there, since another process may
    have migrated it while this one waited for the lock: then nothing is done and 0 returned.
    """
    if not found(db):
        return 0
    before = db.total_changes
    db.execute(MIGRATE)
    moved = db.total_changes - before
    db.execute(f"ALTER TABLE {OLD_TABLE} RENAME TO {KEPT_AS}")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('migrated_from', ?)", (VERSION,))
    return moved
