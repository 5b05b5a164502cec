"""From stored answers to labels: one row per answer, one label per pair, a job summary."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from ..judges import LLMJudge, majority
from ..llm.calls import UNPARSED, RunStats
from ..llm.store import Record
from .tasks import passage_text

JUDGMENT_COLUMNS = [
    "judge",
    "query_id",
    "doc_id",
    "provenance",
    "sample",
    "model",
    "model_version",
    "raw",
    "label",
    "status",
    "parse_rule",
    "attempts",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "latency_s",
    "passage_chars",
    "created",
    "key",
]
"""Columns of a judge's raw-answer parquet (every answer, to audit)."""


def judgments(records: Iterable[Record], texts: dict[str, str]) -> pd.DataFrame:
    """Every stored answer of a judge as a table, sorted by pair and sample."""
    rows = [
        {
            **r.items,
            "judge": r.caller,
            "sample": r.sample,
            "model": r.model,
            "model_version": r.model_version,
            "raw": r.raw,
            "label": r.value if r.status == "ok" else None,
            "status": r.status,
            "parse_rule": r.rule,
            "attempts": r.attempts,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "cost": r.cost,
            "latency_s": r.latency_s,
            "passage_chars": len(passage_text(texts, r.items["query_id"], r.items["doc_id"])),
            "created": r.created,
            "key": r.key,
        }
        for r in records
    ]
    frame = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    frame["label"] = frame["label"].astype("Int64")
    return frame.sort_values(["query_id", "doc_id", "sample"]).reset_index(drop=True)


def aggregate(judgments: pd.DataFrame) -> pd.DataFrame:
    """One label per pair from its samples: majority of parsed labels, ties by lower median.

    Returns (query_id, doc_id, relevance, samples, parsed, disagree); ``relevance`` is NA
    when no sample parsed (the pair is *unparsed*, never 0).
    """
    rows = []
    for (qid, docid), group in judgments.groupby(["query_id", "doc_id"], sort=True):
        labels = [int(v) for v in group["label"].dropna()]
        label = majority(labels)
        rows.append((qid, docid, label, len(group), len(labels), len(set(labels)) > 1))
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance", "samples", "parsed", "disagree"])
    frame["relevance"] = frame["relevance"].astype("Int64")
    return frame


def summary(
    judge: LLMJudge, judgments: pd.DataFrame, labels: pd.DataFrame, stats: RunStats, *, price_known: bool
) -> dict:
    """What a judging job did and found: calls, cache hits, unparsed answers, cost."""
    multi = labels[labels["parsed"] >= 2]
    result = {
        "judge": judge.name,
        "model": judge.model,
        "model_versions": sorted({v for v in judgments["model_version"].dropna()}),
        "samples_per_pair": judge.samples,
        "pairs": len(labels),
        "unparsed_pairs": int(labels["relevance"].isna().sum()),
        "unparsed_answers": int((judgments["status"] == UNPARSED).sum()),
        "parse_rules": judgments.loc[judgments["status"] == "ok", "parse_rule"].value_counts().to_dict(),
        "repeat_disagreement_rate": float(multi["disagree"].mean()) if len(multi) else math.nan,
        "calls_this_run": stats.calls - stats.cached,
        "requests_this_run": stats.requests,
        # the requests among them sent again after a transport failure, by the failure's class
        "resent_this_run": dict(sorted(stats.resent.items())),
        "cached": stats.cached,
        "rekeyed_from_v0_1": stats.adopted,
        "copied_from_finished_jobs": stats.seeded,
        "max_in_flight": stats.max_in_flight,
        "cost_this_run_usd": stats.cost,
        "price_known": price_known,
        "cost_ledger_usd": float(judgments["cost"].sum()),
        "prompt_tokens_ledger": int(judgments["prompt_tokens"].fillna(0).sum()),
        "completion_tokens_ledger": int(judgments["completion_tokens"].fillna(0).sum()),
        "wall_s": stats.wall_s,
        # what the provider batches did (a judge with batch:), else None
        "batch": stats.batch.as_dict() if stats.batch is not None else None,
    }
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in result.items()}
