"""Datasets: normalise any source to topics, human qrels and (optionally) candidates.

Three sources (SPEC section 1):

* ``ir_datasets``: an ir_datasets id such as ``msmarco-passage/trec-dl-2019/judged``;
  ir_datasets downloads on a user's machine and reads local files under
  ``IR_DATASETS_HOME`` without network.
* ``local``: a topics TSV, a TREC qrels file and a JSONL corpus to index.
* ``rankgpt``: RankGPT / rank_llm ``retrieve_results`` JSON (BM25 candidates with texts)
  plus a qrels file. The candidates are then the BM25 run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .errors import InputError
from .formats import QRELS_COLUMNS, read_qrels, read_rankgpt, read_topics

SOURCES = ("ir_datasets", "local", "rankgpt")


@dataclass(frozen=True)
class Dataset:
    topics: dict[str, str]
    qrels: pd.DataFrame


def load_ir_datasets(dataset_id: str, scale: tuple[int, int] = (0, 3)) -> Dataset:
    """Topics and qrels of an ir_datasets dataset (its queries' ``text`` field)."""
    import ir_datasets

    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r}") from None
    topics = {q.query_id: q.text for q in dataset.queries_iter()}
    rows = [(q.query_id, q.doc_id, int(q.relevance)) for q in dataset.qrels_iter()]
    qrels = pd.DataFrame(rows, columns=QRELS_COLUMNS).drop_duplicates()
    low, high = scale
    bad = qrels[(qrels["relevance"] < low) | (qrels["relevance"] > high)]
    if len(bad):
        row = bad.iloc[0]
        raise InputError(
            f"{dataset_id}: grade {row.relevance} for {row.query_id}/{row.doc_id} is outside "
            f"{low}..{high}"
        )
    return Dataset(topics, qrels)


def load_dataset(spec: dict, scale: tuple[int, int] = (0, 3)) -> Dataset:
    """Topics and human qrels for one dataset entry of the config."""
    source = spec["source"]
    if source == "ir_datasets":
        dataset = load_ir_datasets(spec["id"], scale)
    elif source == "local":
        dataset = Dataset(read_topics(spec["topics"]), read_qrels(spec["qrels"], scale))
    elif source == "rankgpt":
        topics = (
            read_topics(spec["topics"]) if spec.get("topics") else read_rankgpt(spec["candidates"])[0]
        )
        dataset = Dataset(topics, read_qrels(spec["qrels"], scale))
    else:
        raise InputError(f"unknown dataset source {source!r}; expected one of {SOURCES}")
    return judged_only(dataset, spec)


def judged_only(dataset: Dataset, spec: dict) -> Dataset:
    """Check that every topic has human qrels (or drop those without, if asked).

    A topic without qrels cannot be scored under humans; silently scoring it 0 would
    distort every mean. By default it is an error naming the query; ``unjudged_topics:
    drop`` keeps only judged topics (what ir_datasets' ``/judged`` subsets do for TREC DL).
    Qrels for queries outside the topics are ignored.
    """
    where = spec.get("topics") or spec.get("candidates") or spec.get("id")
    judged = set(dataset.qrels["query_id"])
    missing = [qid for qid in dataset.topics if qid not in judged]
    if missing and spec.get("unjudged_topics", "error") == "error":
        raise InputError(
            f"{len(missing)} topic(s) have no qrels (first: {missing[0]}); fix the qrels or set "
            "unjudged_topics: drop for this dataset",
            path=where,
        )
    topics = {qid: text for qid, text in dataset.topics.items() if qid in judged}
    if not topics:
        raise InputError("no topic has qrels: topics and qrels share no query id", path=where)
    qrels = dataset.qrels[dataset.qrels["query_id"].isin(topics)].reset_index(drop=True)
    return Dataset(topics, qrels)
