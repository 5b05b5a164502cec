"""One judging job end to end: needed pairs in, qrels + raw answers + summary out.

Used by the workflow's ``llm_judge`` rule and by tests. The store is a cache outside the
job's declared outputs, so Snakemake never deletes it; a rerun answers from it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..formats import atomic_write, read_pairs, read_passages, read_topics, write_qrels
from ..judges import LLMJudge
from ..llm import Call, Store, call_all, price_known
from ..llm.batch import DIRECT
from .aggregate import aggregate, judgments, summary
from .tasks import GradeAccept, judge_calls


def load_inputs(pairs_tsv: str | Path, passages_parquet: str | Path, topics_tsv: str | Path):
    return read_pairs(pairs_tsv), read_passages(passages_parquet), read_topics(topics_tsv)


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
    max_in_flight: int | None = None,
    seeds: Sequence[str | Path] = (),
    served: Mapping[str, Any] | None = None,
    ahead: Sequence[Call] = (),
) -> dict:
    """Judge every needed pair through the store; ``max_in_flight`` is the job's ``llm_slots``;
    ``seeds`` are finished stores of the same judge whose answers are reused (same request key);
    ``served`` is what the results keep of the model server the workflow started for this judge.

    ``ahead``: calls this judge's other jobs will make (the assistants experiment's sample, the
    gamed system's passages), asked in the same run and kept in the store only, so that those
    jobs copy the answers instead of starting the model (or litellm) again. They enter no label,
    table or count of this job's pairs; the summary says how many calls they took
    (``asked_ahead``, included in ``calls_this_run``)."""
    calls = judge_calls(judge, pairs, topics, texts, provenance=provenance)
    mine = {c.key for c in calls}
    extra = list({c.key: c for c in ahead if c.key not in mine}.values())
    with Store(store_path) as store:
        stats = call_all(
            judge.endpoint,
            calls + extra,
            store,
            accept=GradeAccept(judge.scale),
            reasks=judge.parse_retries,
            max_in_flight=max_in_flight,
            progress=progress,
            desc=f"judging {judge.name}",
            config_key=f"judges[{judge.name}]",
            seeds=seeds,
            # a direct judge collects the batches an earlier batch run left unread first (never paid twice)
            batch=judge.batch if judge.batch is not None else DIRECT,
        )
        answers = judgments(store.get(c.key for c in calls), texts)
        known = price_known(judge.model, store)  # as the store keeps it: no litellm for a job that asked nothing
    labels = aggregate(answers)
    write_qrels(labels.dropna(subset=["relevance"]), qrels_out)
    with atomic_write(raw_out, "wb") as fh:
        answers.to_parquet(fh, index=False)
    result = summary(judge, answers, labels, stats, price_known=known)
    result["served"] = served
    result["asked_ahead"] = len(extra)
    with atomic_write(summary_out) as fh:
        json.dump(result, fh, indent=2)
    return result
