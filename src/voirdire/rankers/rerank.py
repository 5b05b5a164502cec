"""Rerank a BM25 pool with one configured ranker, query by query, resumable.

Each finished query is appended to a checkpoint (JSON lines, flushed and fsynced) next to
the output, so a killed job resumes where it stopped; the run file is written only when
every query is done.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

from ..swaps import swap_rates
from ..systems import Ranker
from .llm import LogitsBackend, prp_rank, rg_scores


def backend_for(ranker: Ranker, store_path: str | Path | None = None, max_in_flight: int | None = None):
    """What answers the ranker's prompts: an LLM backend (RG, PRP) or a T5 scorer."""
    if ranker.method == "dense":
        from .dense import DenseScorer

        return DenseScorer(model=ranker.model, batch_size=max(ranker.batch_size, 32))
    if ranker.method in ("rankt5", "monot5"):
        from .t5 import T5Scorer

        return T5Scorer(
            model=ranker.model,
            kind=ranker.method,
            batch_size=ranker.batch_size,
            max_length=ranker.max_length,
            dtype=ranker.dtype,
        )
    if ranker.backend == "litellm":
        from .api import LiteLLMBackend

        if store_path is None:
            raise ValueError("a litellm ranker needs a store path")
        return LiteLLMBackend(
            endpoint=ranker.endpoint, store_path=Path(store_path), ranker=ranker.name, max_in_flight=max_in_flight
        )
    return LogitsBackend(ranker.model, batch_size=ranker.batch_size, dtype=ranker.dtype)


def rerank_query(
    ranker: Ranker, backend, query: str, docids: list[str], texts: dict[str, str], query_id: str = ""
) -> tuple[list[str], dict | None]:
    """The pool of one query (BM25 order) reordered by ``ranker``; PRP also returns its bias figures."""
    head, tail = docids[: ranker.depth], docids[ranker.depth :]
    passages = [texts[d] for d in head]
    bias = None
    if ranker.method == "prp":
        order, ledger = prp_rank(
            backend, query, passages, variant=ranker.variant, k=ranker.k, ids=head, query_id=query_id
        )
        bias = ledger.bias()
    else:
        scores = pointwise_scores(ranker, backend, query, passages, ids=head, query_id=query_id)
        order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + tail, bias


def pointwise_scores(
    ranker: Ranker, backend, query: str, passages: list[str], *, ids: list[str], query_id: str = ""
) -> list[float]:
    """A pointwise ranker's score of each passage for the query (RG: P(Yes); T5: its logit; dense: cosine)."""
    if ranker.method == "rg":
        return rg_scores(backend, query, passages, ids=ids, query_id=query_id)
    if ranker.method in ("rankt5", "monot5", "dense"):  # a T5Scorer or a DenseScorer
        return list(backend.score(query, passages))
    raise ValueError(f"{ranker.name} is a {ranker.method} ranker, not a pointwise one")


def unchanged_queries(pools: dict[str, list[str]], depth: int, changed: set[str]) -> set[str]:
    """Queries whose top ``depth`` (what a ranker reorders) holds no passage of ``changed``: in a
    collection where only those passages' texts changed, their orderings stay as they were."""
    return {q for q, docids in pools.items() if changed.isdisjoint(docids[:depth])}


def load_checkpoint(path: Path) -> dict[str, dict]:
    """Finished queries from a checkpoint; a torn last line (killed mid-write) is ignored."""
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[record["query_id"]] = record
    return done


def drop_torn_line(path: Path) -> None:
    """Cut a last line without its newline (a write killed midway) off the checkpoint: the next
    record appended would otherwise continue it, and that line (a finished query) would not parse."""
    if path.exists() and (data := path.read_bytes()) and not data.endswith(b"\n"):
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


def rerank_all(
    ranker: Ranker,
    pools: dict[str, list[str]],
    topics: dict[str, str],
    texts: dict[str, str],
    checkpoint: Path,
    *,
    store_path: str | Path | None = None,
    progress: bool = True,
    max_in_flight: int | None = None,
) -> dict[str, dict]:
    """Rerank every query, skipping those already in ``checkpoint``; returns all records."""
    from tqdm.auto import tqdm

    done = load_checkpoint(checkpoint)
    todo: Iterable[str] = [q for q in pools if q not in done]
    backend = backend_for(ranker, store_path, max_in_flight) if todo else None  # no model to load
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    drop_torn_line(checkpoint)
    with checkpoint.open("a", encoding="utf-8") as fh:
        for qid in tqdm(todo, desc=f"reranking with {ranker.name}", disable=not progress, unit="query"):
            ranking, bias = rerank_query(ranker, backend, topics[qid], pools[qid], texts, qid)
            record = {"query_id": qid, "ranking": ranking, "bias": bias}
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            done[qid] = record
    return done


POSITION_BIAS_VIEW = [
    "ranker",
    "variant",
    "model",
    "pairs",
    "answered_both",
    "unparsed",
    "surviving",
    "order_dependent",
    "position_consistency",
    "first_position_win_rate",
    "tie_rate",
]
"""The columns of the position-bias table (ranker, variant, model and :func:`total_bias`) a
person reads in the Markdown; the CSV keeps every one (``order_dependent_rate`` is ``tie_rate``)."""
POSITION_BIAS_COUNTS = [
    "pairs",
    "prompts",
    "answered",
    "unparsed",
    "answered_both",
    "surviving",
    "order_dependent",
    "first_position_wins",
]
"""The position-bias table's counts (:func:`voirdire.output.write_table`'s ``counts``): integers in
the Markdown, also in the float column a ranker without bias figures (not PRP) leaves them in."""


def total_bias(records: Iterable[dict]) -> dict | None:
    """Position-bias figures of a PRP ranker summed over queries (None for other methods)."""
    parts = [r["bias"] for r in records if r.get("bias")]
    if not parts:
        return None
    keys = dict.fromkeys(key for part in parts for key in part)  # in first-seen order: stable columns
    total: dict = {key: sum(p.get(key, 0) for p in parts) for key in keys}
    rates = {k: None if math.isnan(v) else v for k, v in swap_rates(total).items()}
    total.update(rates, order_dependent_rate=rates["tie_rate"])
    return total
