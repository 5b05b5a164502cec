"""The embedding judge: a grade from the cosine similarity of query and passage embeddings.

A judge with real relevance signal that runs offline in seconds (all-MiniLM-L6-v2, bundled),
so the demo has more than a flat line. Similarities become grades on the judge's scale either
by per-query quantiles (default: within each query, the lowest quarter of its needed pairs is
0, the next 1, ...), or by declared ``thresholds`` (grade = how many thresholds the cosine
reaches). It makes no LLM call and stores nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    model: str, pairs: pd.DataFrame, topics: dict[str, str], texts: dict[str, str], scale: Scale,
    thresholds: Sequence[float] | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Grades of every needed pair by the cosine similarity of ``model``'s embeddings."""
    from .rankers.dense import cosine

    similarity = cosine(model, [topics[q] for q in pairs["query_id"]], [texts[d] for d in pairs["doc_id"]])
    return grades_from_similarity(pairs, similarity, scale, thresholds)


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
