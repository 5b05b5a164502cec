"""The cost ledger: what each LLM caller's calls were planned to cost, and what they did cost.

One row per dataset and caller (a judge, an assistant, a padder, a ranker), in the columns of
:data:`LEDGER_COLUMNS`:

* **planned** (:func:`voirdire.plan.ledger_rows`): every call the plan lists for the caller, each
  request once, stored or not; prompt tokens by the model's tokenizer, completions at
  ``max_tokens`` (an upper bound), priced as the caller pays (the batch price for a judge with
  ``batch:``, ``price`` says which);
* **spent** (:func:`spent_by_caller`, read from the stores): the answers the caller paid for
  (``attempts`` > 0; an answer copied from another job's store cost nothing and is not counted
  again), the requests they took (re-asks included), how many came through provider batches,
  and their tokens and cost as stored: a cached answer costs 0 the next time. Answers a batch
  returned that no store row holds (an answer a resumed batch had for a request no run asked
  for, or one not accepted whose direct re-ask has not happened yet) are paid too, and counted.

:func:`ledger_notes` gives the verdict a line per caller and dataset.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

LEDGER_COLUMNS = (
    "dataset",
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


def spent_by_caller(stores: Iterable[str | Path]) -> dict[str, Spent]:
    """What each caller's answers in ``stores`` cost (read-only: finished stores of other jobs).

    An answer stored in two stores (one job asked it, another copied it) counts once.
    """
    spent: dict[str, Spent] = {}
    seen: set[tuple[str, str]] = set()
    for path in stores:
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
                if not attempts or (caller, key) in seen:
                    continue  # copied from another store (cost 0), or counted in another store
                seen.add((caller, key))
                entry = spent.setdefault(caller, Spent(model=model))
                entry.calls += 1
                entry.via_batch += key in batched
                entry.add(attempts, prompt_tokens, completion_tokens, cost)
            if "batch_calls" in tables and len(callers) == 1:  # a judge's own store: its batches' paid extras
                owner = spent.setdefault(next(iter(callers)), Spent())
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


def ledger_notes(table: pd.DataFrame) -> list[str]:
    """One line per caller and dataset of the ledger (:data:`LEDGER_COLUMNS`) that planned or
    spent anything: what it paid for against what was planned, for the verdict's notes."""
    notes = []
    if table is None or not len(table):
        return notes
    for row in table.itertuples(index=False):
        planned_calls = 0 if pd.isna(row.planned_calls) else int(row.planned_calls)
        if not planned_calls and not row.spent_calls:
            continue
        known = not (isinstance(row.planned_cost_usd_max, float) and math.isnan(row.planned_cost_usd_max))
        if not planned_calls:
            planned = "no call planned"
        elif known:
            planned = (
                f"{planned_calls:,} calls planned, at most {_dollars(float(row.planned_cost_usd_max))} ({row.price})"
            )
        else:
            planned = f"{planned_calls:,} calls planned (litellm's cost map has no price for {row.model})"
        via = f", {int(row.spent_via_batch):,} through provider batches" if row.spent_via_batch else ""
        notes.append(
            f"Cost ledger, {row.caller} on {row.dataset}: {int(row.spent_calls):,} answers paid for "
            f"({int(row.spent_requests):,} requests{via}; {int(row.spent_prompt_tokens):,} prompt and "
            f"{int(row.spent_completion_tokens):,} completion tokens), {_dollars(float(row.spent_cost_usd))} "
            f"spent; {planned}."
        )
    return notes
