"""The cost ledger: what each LLM caller's calls were planned to cost, and what they did cost.

One row per dataset, role and caller (a judge, an assistant, a padder, a ranker: an assistant and
a judge of one name are two rows), in the columns of :data:`LEDGER_COLUMNS`:

* **planned** (:func:`voirdire.plan.ledger_rows`): every call the plan lists for the caller, each
  request once, stored or not; prompt tokens by the model's tokenizer, completions at
  ``max_tokens`` (an upper bound), priced as the caller pays (the batch price for a judge with
  ``batch:``, ``price`` says which; a local model costs $0, :data:`LOCAL`; a model without a
  price in litellm's cost map costs an unknown amount, :data:`UNKNOWN`, never 0);
* **spent** (:func:`spent_by_caller`, read from the stores): the answers the caller paid for
  (``attempts`` > 0; an answer copied from another job's store cost nothing and is not counted
  again), the requests they took (re-asks included), how many came through provider batches,
  and their tokens and cost as stored: a cached answer costs 0 the next time. Answers a batch
  returned that no store row holds (an answer a resumed batch had for a request no run asked
  for, or one not accepted whose direct re-ask has not happened yet) are paid too, and counted.

:func:`ledger_notes` gives the verdict a line per role, caller and dataset.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

LEDGER_COLUMNS = (
    "dataset",
    "role",
    "caller",
    "model",
    "batch",
    "price",
    "planned_calls",
    "planned_prompt_tokens",
    "planned_completion_tokens_max",
    "planned_cost_usd_max",
    "spent_calls",
    "spent_requests",
    "spent_via_batch",
    "spent_prompt_tokens",
    "spent_completion_tokens",
    "spent_cost_usd",
)
"""The ledger's columns (the CSV's, in order)."""

LOCAL = "local ($0)"
"""The ``price`` of a model run on this machine (``local/...``): nothing is paid for its answers."""
UNKNOWN = "unknown (not in litellm's cost map)"
"""The ``price`` of a model litellm's cost map has no price for (an API or self-hosted model): its
dollars are unknown (empty), never 0."""


@dataclass
class Spent:
    """What one caller's stored answers cost (see the module docstring)."""

    model: str = ""
    calls: int = 0
    requests: int = 0
    via_batch: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def add(self, requests: int, prompt_tokens: int | None, completion_tokens: int | None, cost: float | None) -> None:
        self.requests += requests
        self.prompt_tokens += int(prompt_tokens or 0)
        self.completion_tokens += int(completion_tokens or 0)
        self.cost += float(cost or 0.0)


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def spent_by_caller(stores: Mapping[str | Path, str]) -> dict[tuple[str, str], Spent]:
    """What each caller's answers in ``stores`` (path -> the role of the callers that write it:
    ``judge``, ``assistant``, ``padder``, ``ranker``) cost, by (role, caller); read-only (each
    store opened with SQLite's ``mode=ro``: finished stores of other jobs). A role keeps apart an
    assistant and a judge of the same name.

    An answer stored in two stores (one job asked it, another copied it) counts once.
    """
    spent: dict[tuple[str, str], Spent] = {}
    seen: set[tuple[str, str, str]] = set()
    for path, role in stores.items():
        if not Path(path).is_file():
            continue
        db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        try:
            tables = _tables(db)
            if "calls" not in tables:
                continue
            batched: set[str] = set()
            if "batch_calls" in tables:
                batched = {row[0] for row in db.execute("SELECT key FROM batch_calls WHERE outcome = 'answered'")}
            query = "SELECT caller, key, model, attempts, prompt_tokens, completion_tokens, cost FROM calls"
            callers: set[str] = set()
            for caller, key, model, attempts, prompt_tokens, completion_tokens, cost in db.execute(query):
                callers.add(caller)
                if not attempts or (role, caller, key) in seen:
                    continue  # copied from another store (cost 0), or counted in another store
                seen.add((role, caller, key))
                entry = spent.setdefault((role, caller), Spent(model=model))
                entry.calls += 1
                entry.via_batch += key in batched
                entry.add(attempts, prompt_tokens, completion_tokens, cost)
            if "batch_calls" in tables and len(callers) == 1:  # a judge's own store: its batches' paid extras
                owner = spent.setdefault((role, next(iter(callers))), Spent())
                extras = db.execute(
                    "SELECT b.prompt_tokens, b.completion_tokens, b.cost FROM batch_calls b "
                    "WHERE b.outcome = 'unused' OR (b.outcome = 'unaccepted' AND b.key NOT IN (SELECT key FROM calls))"
                )
                for prompt_tokens, completion_tokens, cost in extras:
                    owner.add(1, prompt_tokens, completion_tokens, cost)
        finally:
            db.close()
    return spent


def _dollars(value: float) -> str:
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if value >= 0.01 else f"${value:.2g}"


def ledger_notes(table: pd.DataFrame, source: str | Path | None = None) -> list[str]:
    """One line per role, caller and dataset of the ledger (:data:`LEDGER_COLUMNS`) that planned or
    spent anything: what it paid for against what was planned, for the verdict's notes. A local
    model (price :data:`LOCAL`) is paid nothing: "0 calls paid, $0", and the answers it made; an
    API model without a price (:data:`UNKNOWN`) has its cost said unknown, never $0. ``source``
    (the ledger's CSV) is named by the last line."""
    notes: list[str] = []
    if table is None or not len(table):
        return notes
    for row in table.itertuples(index=False):
        planned_calls = 0 if pd.isna(row.planned_calls) else int(row.planned_calls)
        if not planned_calls and not row.spent_calls:
            continue
        who = f"Cost ledger, {row.role} {row.caller} on {row.dataset}"
        tokens = f"{int(row.spent_prompt_tokens):,} prompt and {int(row.spent_completion_tokens):,} completion tokens"
        planned = f"{planned_calls:,} calls planned" if planned_calls else "no call planned"
        if row.price == LOCAL:
            notes.append(
                f"{who}: 0 calls paid, $0 (the local model {row.model}); {int(row.spent_calls):,} answers made on "
                f"this machine ({int(row.spent_requests):,} requests; {tokens}); {planned}."
            )
            continue
        if planned_calls and not _missing(row.planned_cost_usd_max):
            planned += f", at most {_dollars(float(row.planned_cost_usd_max))} ({row.price})"
        elif planned_calls:
            planned += f" (litellm's cost map has no price for {row.model})"
        if _missing(row.spent_cost_usd):
            spent = f"cost unknown (litellm's cost map has no price for {row.model})"
        else:
            spent = f"{_dollars(float(row.spent_cost_usd))} spent"
        via = f", {int(row.spent_via_batch):,} through provider batches" if row.spent_via_batch else ""
        notes.append(
            f"{who}: {int(row.spent_calls):,} answers paid for ({int(row.spent_requests):,} requests{via}; "
            f"{tokens}), {spent}; {planned}."
        )
    if notes and source is not None:
        notes[-1] += f" Every caller's calls, tokens and dollars: {source}."
    return notes


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
