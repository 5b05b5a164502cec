"""The judge as a ranker (circularity; Clarke & Dietz, arXiv 2412.17156).

A judge's labels define a ranking: sort each query's BM25 pool by the judge's grade, ties (and
passages the judge did not label) in BM25 order. Scoring that ranking with the same judge's
labels is circular: Clarke & Dietz found UMBRELA's own ranking at nDCG > 0.95 under UMBRELA
labels against 0.68-0.72 under humans. The judge x ranker table shows, for every judge's
ranking, its score under the humans and under every judge, so the diagonal can be read
against the human column.

Choice: evaluation is judged-only nDCG@10 (SPEC section 4), so only the human-judged pool
passages -- exactly the pairs every judge labels -- decide a ranking's score; the judge need
not label the rest of the pool, and this audit makes no call.
"""

from __future__ import annotations

import pandas as pd


def judge_ranking(pool: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """A TREC-style run (query_id, doc_id, rank, score): the pool sorted by the judge's grade."""
    merged = pool.merge(labels[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"], how="left")
    merged["grade"] = merged["relevance"].fillna(-1)  # unlabelled passages go below every grade
    merged = merged.sort_values(["query_id", "grade", "rank"], ascending=[True, False, True], kind="stable")
    merged["rank"] = merged.groupby("query_id").cumcount() + 1
    merged["score"] = -merged["rank"].astype(float)
    return merged[["query_id", "doc_id", "rank", "score"]].reset_index(drop=True)


def circularity_table(scores: pd.DataFrame, human: str = "human") -> pd.DataFrame:
    """From mean nDCG@10 of each judge's ranking (rows ``ranker``) under each judge (columns):
    the self-score, the human score and their gap per ranking judge."""
    rows = []
    for ranker in scores.index:
        rows.append({"ranker": ranker, "self_score": scores.loc[ranker, ranker],
                     "human_score": scores.loc[ranker, human],
                     "inflation": scores.loc[ranker, ranker] - scores.loc[ranker, human]})  # fmt: skip
    return pd.DataFrame(rows)
