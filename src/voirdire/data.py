"""Datasets: normalise any source to topics, human qrels and (optionally) candidates.

Three sources (docs/configuration.md):

* ``ir_datasets``: an ir_datasets id such as ``msmarco-passage/trec-dl-2019/judged``;
  ir_datasets downloads on a user's machine and reads local files under
  ``IR_DATASETS_HOME`` without network.
* ``local``: a topics TSV, a TREC qrels file and a JSONL corpus to index.
* ``rankgpt``: RankGPT / rank_llm ``retrieve_results`` JSON (BM25 candidates with texts)
  plus a qrels file. The candidates are then the BM25 run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pandas as pd

from .errors import InputError
from .formats import QRELS_COLUMNS, read_qrels, read_rankgpt, read_topics

SOURCES = ("ir_datasets", "local", "rankgpt")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Dataset:
    topics: dict[str, str]
    qrels: pd.DataFrame
    dropped: dict[str, int] = field(default_factory=dict)
    """What a ``drop`` setting left out: topics without qrels, qrels of unknown queries,
    topics without candidates (each counted in ``data/summary.json`` and said in the log)."""
    set_aside: tuple[str, ...] = ()
    """Topics the dataset's ``queries`` list leaves out (a smaller run), with their qrels."""

    def summary(self) -> dict:
        counts = {"topics": len(self.topics), "qrels": len(self.qrels), **self.dropped}
        return counts | (
            {"queries_set_aside": len(self.set_aside), "set_aside": list(self.set_aside)} if self.set_aside else {}
        )


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
            f"{dataset_id}: grade {row.relevance} for {row.query_id}/{row.doc_id} is outside {low}..{high}"
        )
    return Dataset(topics, qrels)


def load_dataset(spec: dict, scale: tuple[int, int] = (0, 3), *, name: str = "dataset") -> Dataset:
    """Topics and human qrels for one dataset entry of the config (``name`` is its config key)."""
    source = spec["source"]
    candidates = None
    if source == "ir_datasets":
        dataset = load_ir_datasets(spec["id"], scale)
    elif source == "local":
        dataset = Dataset(read_topics(spec["topics"]), read_qrels(spec["qrels"], scale))
    elif source == "rankgpt":
        found, run, _ = read_rankgpt(spec["candidates"])
        topics = read_topics(spec["topics"]) if spec.get("topics") else found
        candidates = set(run["query_id"])
        dataset = Dataset(topics, read_qrels(spec["qrels"], scale))
    else:
        raise InputError(f"unknown dataset source {source!r}; expected one of {SOURCES}")
    return select(reconcile(dataset, spec, name=name, candidates=candidates), spec, name=name)


def select(dataset: Dataset, spec: dict, *, name: str) -> Dataset:
    """The topics the dataset's ``queries`` list names, in the topics' order, and their qrels.

    The others are set aside (``Dataset.set_aside``, counted in ``data/summary.json`` and said
    in the log); every file is still read and checked whole. A listed id that is not a topic
    with qrels is an error naming the key: a typo would otherwise shrink the run silently.
    """
    wanted = spec.get("queries")
    if not wanted:
        return dataset
    missing = [q for q in wanted if q not in dataset.topics]
    if missing:
        raise InputError(
            f"{len(missing)} of the {len(wanted)} listed queries are not topics with qrels (first: {missing[0]!r})",
            key=f"datasets.{name}.queries",
        )
    keep = set(wanted)
    topics = {qid: text for qid, text in dataset.topics.items() if qid in keep}
    set_aside = tuple(qid for qid in dataset.topics if qid not in keep)
    qrels = dataset.qrels[dataset.qrels["query_id"].isin(keep)].reset_index(drop=True)
    if set_aside:
        log.info(
            "%s: queries: %d of %d topics kept, %d set aside (first: %s) with their %d qrels",
            name,
            len(topics),
            len(dataset.topics),
            len(set_aside),
            set_aside[0],
            len(dataset.qrels) - len(qrels),
        )
    return Dataset(topics, qrels, dataset.dropped, set_aside)


def _where(spec: dict, *keys: str) -> str | None:
    return next((spec[k] for k in keys if spec.get(k)), None)


def reconcile(dataset: Dataset, spec: dict, *, name: str, candidates: set[str] | None = None) -> Dataset:
    """Topics, qrels and candidates must name the same queries; what does not fit is an error.

    * A topic without qrels cannot be scored under humans (``unjudged_topics``).
    * Qrels of a query that is not a topic would be ignored without a word (a byte-order
      mark once turned ``q01`` into ``\\ufeffq01`` this way) (``unknown_qrels``).
    * A topic without candidates would score 0 for every system (``uncovered_topics``).

    Each is an error naming the file, the config key and the first id, unless the dataset
    sets the key to ``drop``: then the ids are left out and counted in ``dropped``.
    """
    dropped: dict[str, int] = {}

    def settle(key: str, ids: list[str], what: str, where: str | None, count: int | None = None) -> None:
        """``count`` items (default: one per id) of ``ids`` do not fit; raise, or drop and count them."""
        if not ids:
            return
        count = len(ids) if count is None else count
        if spec.get(key, "error") == "error":
            raise InputError(
                f"{count} {what} (first: {ids[0]}); fix the files or set {key}: drop",
                path=where,
                key=f"datasets.{name}.{key}",
            )
        dropped[f"{key}_dropped"] = count
        log.warning("%s: %s: dropped %d %s (first: %s)", name, key, count, what, ids[0])

    judged = set(dataset.qrels["query_id"])
    topics_file = _where(spec, "topics", "candidates", "id")
    unknown = sorted(judged - set(dataset.topics))
    settle(
        "unknown_qrels",
        unknown,
        f"qrels of {len(unknown)} query id(s) that are not topics",
        _where(spec, "qrels", "id"),
        count=int(dataset.qrels["query_id"].isin(unknown).sum()),
    )
    settle("unjudged_topics", [q for q in dataset.topics if q not in judged], "topic(s) have no qrels", topics_file)
    if candidates is not None:
        settle(
            "uncovered_topics",
            [q for q in dataset.topics if q not in candidates],
            "topic(s) have no candidates",
            spec["candidates"],
        )
    topics = {
        qid: text for qid, text in dataset.topics.items() if qid in judged and (candidates is None or qid in candidates)
    }
    if not topics:
        raise InputError("no topic has qrels: topics and qrels share no query id", path=topics_file)
    qrels = dataset.qrels[dataset.qrels["query_id"].isin(topics)].reset_index(drop=True)
    return Dataset(topics, qrels, dropped)
