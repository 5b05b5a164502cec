"""The embedding judge: a grade from the cosine similarity of query and passage embeddings.

A judge with real relevance signal that runs offline in seconds (all-MiniLM-L6-v2, bundled),
so the demo has more than a flat line. Similarities become grades on the judge's scale either
by per-query quantiles (default: within each query, the lowest quarter of its needed pairs is
0, the next 1, ...), or by declared ``thresholds`` (grade = how many thresholds the cosine
reaches). It makes no LLM call and stores nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .judges import Scale


def grades_from_similarity(
    pairs: pd.DataFrame, similarity: Sequence[float], scale: Scale, thresholds: Sequence[float] | None = None
) -> pd.DataFrame:
    """qrels (query_id, doc_id, relevance) for ``pairs`` from their similarities."""
    frame = pairs[["query_id", "doc_id"]].copy()
    frame["similarity"] = np.asarray(similarity, dtype=float)
    levels = scale.high - scale.low + 1
    if thresholds is not None:
        if len(thresholds) != levels - 1 or list(thresholds) != sorted(thresholds):
            raise ValueError(f"thresholds must be {levels - 1} increasing values for the scale {scale}")
        grade = np.searchsorted(np.asarray(thresholds), frame["similarity"].to_numpy(), side="right")
    else:  # per-query quantiles: rank within the query, cut into `levels` equal parts
        share = frame.groupby("query_id")["similarity"].rank(method="first", pct=True).to_numpy()
        grade = np.minimum((share * levels - 1e-9).astype(int), levels - 1)
    frame["relevance"] = scale.low + grade
    return frame[["query_id", "doc_id", "relevance"]]


def embedding_labels(
    model: str,
    pairs: pd.DataFrame,
    topics: Mapping[str, str],
    texts: Mapping[str, str],
    scale: Scale,
    thresholds: Sequence[float] | None = None,
    *,
    sample: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The embedding judge's grades (query_id, doc_id, similarity, relevance) of ``pairs`` (the
    needed pairs) and of ``sample`` (the assistants experiment's sample; none: no rows), by the
    cosine similarity of ``model``'s embeddings of the query and the passage text.

    Both sets are embedded in one pass, each distinct text once. The pairs are graded among
    themselves, so their labels are those of the pool alone whether a sample is given or not;
    the sample is graded among the pairs and the sample together (per-query quantiles on the
    same footing as the pool's) and only its own pairs are returned (Figure 4)."""
    from .rankers.dense import cosine

    keys = ["query_id", "doc_id"]
    pairs = pairs[keys]
    sample = pairs.iloc[:0] if sample is None else sample[keys]
    everything = pd.concat([pairs, sample]).drop_duplicates().reset_index(drop=True)
    similarity = pd.Series(
        cosine(model, [topics[q] for q in everything["query_id"]], [texts[d] for d in everything["doc_id"]]),
        index=pd.MultiIndex.from_frame(everything),
    )

    def graded(frame: pd.DataFrame) -> pd.DataFrame:
        found = similarity.loc[pd.MultiIndex.from_frame(frame)].to_numpy()
        labels = grades_from_similarity(frame, found, scale, thresholds)
        labels.insert(2, "similarity", found)
        return labels

    return graded(pairs), graded(everything).merge(sample.drop_duplicates(), on=keys)


def grades_against(
    reference: pd.DataFrame,
    items: pd.DataFrame,
    similarity: Sequence[float],
    scale: Scale,
    thresholds: Sequence[float] | None = None,
) -> pd.DataFrame:
    """qrels for new passages (``items``: query_id, doc_id) graded on the footing of the pool's:
    with ``thresholds``, as any pair; by per-query quantiles, the grade the pool pair of the same
    query with the highest similarity at or below the new one's got (``scale.low`` below them
    all), so a new passage moves no pool label. ``reference``: the pool's (query_id, similarity,
    relevance), as :func:`grades_from_similarity` graded them."""
    if thresholds is not None:
        return grades_from_similarity(items, similarity, scale, thresholds)
    frame = items[["query_id", "doc_id"]].copy()
    grades = []
    by_query = {q: g.sort_values("similarity") for q, g in reference.groupby("query_id", sort=False)}
    for qid, value in zip(frame["query_id"], np.asarray(similarity, dtype=float), strict=True):
        pool = by_query.get(qid)
        below = pool[pool["similarity"] <= value] if pool is not None else None
        grades.append(int(below["relevance"].max()) if below is not None and len(below) else scale.low)
    frame["relevance"] = grades
    return frame


def embedding_labels_against(
    model: str,
    reference: pd.DataFrame,
    items: pd.DataFrame,
    topics: Mapping[str, str],
    scale: Scale,
    thresholds: Sequence[float] | None = None,
) -> pd.DataFrame:
    """qrels (query_id, doc_id, relevance) for new texts (``items``: query_id, doc_id, text; the
    gamed system's modified passages) by the cosine similarity of ``model``'s embeddings, graded
    on the footing of the pool's labels (``reference``: the pairs' labels from
    :func:`embedding_labels`) by :func:`grades_against`."""
    from .rankers.dense import cosine

    similarity = cosine(model, [topics[q] for q in items["query_id"]], list(items["text"]))
    return grades_against(reference, items, similarity, scale, thresholds)
