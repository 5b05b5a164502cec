"""Null judges: label baselines that every real judge must beat (docs/definitions.md).

A judge that cannot beat "longer is more relevant" on kappa and tau has learned nothing a
ruler could not (reward-bench#267: "pick the longer answer" scores 100% on some subsets).

* ``length``: within each query, the needed passages are split into four equal-sized groups
  by word count; the shortest quarter gets 0, the longest 3.
* ``overlap``: the fraction f of distinct query terms (lower-cased word tokens, minus a short
  stopword list) that occur in the passage; grade = min(3, floor(4 f)), so 0 for f < 0.25
  and 3 for f >= 0.75.

Both use the TREC DL 0-3 scale (relevant >= 2) and are deterministic.
"""

from __future__ import annotations

import math
import re

import pandas as pd

METHODS = ("length", "overlap")
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it of on or the to was what "
    "when where which who why will with you your".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")


def terms(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS}


def length_grades(pairs: pd.DataFrame, texts: dict[str, str]) -> pd.Series:
    lengths = pairs["doc_id"].map(lambda d: len(texts[d].split()))
    # rank within query (ties by docid order for determinism), then quartile
    frame = pairs.assign(length=lengths).sort_values(["query_id", "length", "doc_id"])
    position = frame.groupby("query_id").cumcount()
    size = frame.groupby("query_id")["doc_id"].transform("size")
    grades = (4 * position // size).clip(upper=3)
    return grades.reindex(pairs.index).astype(int)


def overlap_grades(pairs: pd.DataFrame, texts: dict[str, str], topics: dict[str, str]) -> pd.Series:
    def grade(row) -> int:
        query = terms(topics[row.query_id])
        if not query:
            return 0
        fraction = len(query & terms(texts[row.doc_id])) / len(query)
        return min(3, math.floor(4 * fraction))

    return pd.Series([grade(row) for row in pairs.itertuples()], index=pairs.index, dtype=int)


def null_labels(method: str, pairs: pd.DataFrame, texts: dict[str, str], topics: dict[str, str]) -> pd.DataFrame:
    """Qrels of a null judge for exactly ``pairs``."""
    if method == "length":
        grades = length_grades(pairs, texts)
    elif method == "overlap":
        grades = overlap_grades(pairs, texts, topics)
    else:
        raise ValueError(f"unknown null judge method {method!r}; expected one of {METHODS}")
    return pairs[["query_id", "doc_id"]].assign(relevance=grades.values)
