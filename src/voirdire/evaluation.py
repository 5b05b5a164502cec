"""Judged-only nDCG@10, per query, for every system under one judge (SPEC section 4).

Unjudged documents are removed from a run before it is cut at 10 (trec_eval ``-J``),
gains are linear, and the ideal DCG uses every qrel of the query. The metric is computed by
ir_measures with its pytrec_eval backend, so the numbers are trec_eval's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import ir_measures
import pandas as pd
from ir_measures import nDCG

MEASURE = nDCG(judged_only=True) @ 10


def per_query_ndcg(
    run: pd.DataFrame, qrels: pd.DataFrame, query_ids: Iterable[str]
) -> pd.Series:
    """nDCG@10 (judged only) for each query in ``query_ids``.

    A query the run does not answer, or with no qrels under this judge, scores 0 (as
    trec_eval ``-c``), so every system is averaged over the same queries.
    """
    qids = [str(q) for q in query_ids]
    wanted = set(qids)
    run = run[run["query_id"].isin(wanted)]
    qrels = qrels[qrels["query_id"].isin(wanted)]
    values = {
        metric.query_id: metric.value
        for metric in ir_measures.pytrec_eval.iter_calc(
            [MEASURE],
            qrels[["query_id", "doc_id", "relevance"]],
            run[["query_id", "doc_id", "score"]],
        )
    }
    return pd.Series([values.get(q, 0.0) for q in qids], index=qids, name=str(MEASURE))


def evaluate_systems(
    runs: Mapping[str, list[pd.DataFrame]], qrels: pd.DataFrame, query_ids: Iterable[str]
) -> pd.DataFrame:
    """Long table (query_id, system, ndcg) for every system under one judge.

    A system given several runs (an oracle with random tie-break, one run per draw) scores
    the mean over its draws, per query.
    """
    qids = [str(q) for q in query_ids]
    frames = []
    for system, system_runs in runs.items():
        per_draw = pd.concat([per_query_ndcg(r, qrels, qids) for r in system_runs], axis=1)
        frames.append(
            pd.DataFrame({"query_id": qids, "system": system, "ndcg": per_draw.mean(axis=1).values})
        )
    return pd.concat(frames, ignore_index=True)
