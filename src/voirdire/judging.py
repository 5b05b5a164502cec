"""One judging job end to end: needed pairs in, qrels + raw answers + summary out.

Used by the workflow's ``llm_judge`` rule and by tests. The store is a cache outside the
job's declared outputs, so Snakemake never deletes it; a rerun answers from it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from .engine import aggregate, build_tasks, judge_all, summary
from .formats import atomic_write, read_passages, read_topics, write_qrels
from .judges import LLMJudge
from .store import COLUMNS, Store

RAW_COLUMNS = [c for c in COLUMNS if c != "key"] + ["key"]


def load_inputs(pairs_tsv: str | Path, passages_parquet: str | Path, topics_tsv: str | Path):
    pairs = pd.read_csv(pairs_tsv, sep="\t", dtype=str)
    return pairs, read_passages(passages_parquet), read_topics(topics_tsv)


def run_judging_job(
    judge: LLMJudge,
    *,
    pairs: pd.DataFrame,
    texts: dict[str, str],
    topics: dict[str, str],
    store_path: str | Path,
    provenance: str,
    qrels_out: str | Path,
    raw_out: str | Path,
    summary_out: str | Path,
    progress: bool = True,
) -> dict:
    tasks = build_tasks(judge, pairs, topics, texts)
    with Store(store_path) as store:
        stats = judge_all(judge, tasks, store, provenance=provenance, progress=progress)
        rows = list(store.get(t.key for t in tasks))
    judgments = pd.DataFrame([r.__dict__ for r in rows], columns=list(COLUMNS))
    judgments = judgments.sort_values(["query_id", "doc_id", "sample"]).reset_index(drop=True)
    labels = aggregate(judgments)
    parsed = labels.dropna(subset=["relevance"])
    write_qrels(parsed, qrels_out)
    with atomic_write(raw_out, "wb") as fh:
        judgments[RAW_COLUMNS].to_parquet(fh, index=False)
    result = summary(judge, judgments, labels, stats)
    with atomic_write(summary_out) as fh:
        json.dump({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in result.items()}, fh, indent=2)
    return result
