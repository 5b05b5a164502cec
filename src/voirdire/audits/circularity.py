"""The judge as a ranker (circularity; Clarke & Dietz, 2024, arXiv 2412.17156).

A judge's labels define a ranking: sort each query's base run (the oracles' base: the BM25 pool
by default) by the judge's grade, ties (and passages the judge did not label) in the base order. Scoring that ranking with the same judge's
labels is circular: Clarke & Dietz found UMBRELA's own ranking at nDCG > 0.95 under UMBRELA
labels against 0.68-0.72 under humans. The judge x ranker table shows, for every judge's
ranking, its score under the humans and under every judge, so the diagonal can be read
against the human column.

Choice: evaluation is judged-only nDCG@10 (docs/definitions.md), so only the human-judged pool
passages -- exactly the pairs every judge labels -- decide a ranking's score; the judge need
not label the rest of the pool, and this audit makes no call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from ..stats import percentile_interval, query_resamples


def judge_ranking(pool: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """A TREC-style run (query_id, doc_id, rank, score): the pool sorted by the judge's grade."""
    merged = pool.merge(labels[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"], how="left")
    merged["grade"] = merged["relevance"].fillna(-1)  # unlabelled passages go below every grade
    merged = merged.sort_values(["query_id", "grade", "rank"], ascending=[True, False, True], kind="stable")
    merged["rank"] = merged.groupby("query_id").cumcount() + 1
    merged["score"] = -merged["rank"].astype(float)
    return merged[["query_id", "doc_id", "rank", "score"]].reset_index(drop=True)


def circularity_table(
    scores: pd.DataFrame,
    human: str = "human",
    *,
    per_query: Mapping[str, pd.DataFrame] | None = None,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> pd.DataFrame:
    """From mean scores of each judge's ranking (rows ``ranker``) under each judge (columns):
    the self-score, the human score and their gap per ranking judge.

    With ``per_query`` (ranker -> query x judge table of the ranking's per-query scores), the
    inflation carries a bootstrap CI over queries (seeded) and a paired t-test of the
    per-query self and human scores (scipy ``ttest_rel``); ``queries`` says how many."""
    rows = []
    for ranker in scores.index:
        row = {"ranker": ranker, "self_score": scores.loc[ranker, ranker], "human_score": scores.loc[ranker, human],
               "inflation": scores.loc[ranker, ranker] - scores.loc[ranker, human]}  # fmt: skip
        if per_query is not None:
            row |= inflation_interval(per_query[ranker][ranker], per_query[ranker][human], resamples=resamples,
                                      seed=seed, level=level)  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def inflation_interval(
    self_scores: pd.Series, human_scores: pd.Series, *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> dict[str, float]:
    """Bootstrap CI over queries of mean(self - human), and the paired t-test of the two."""
    diff = (self_scores - human_scores.loc[self_scores.index]).to_numpy(dtype=float)
    row = {"queries": len(diff), "inflation_ci_low": math.nan, "inflation_ci_high": math.nan, "inflation_p": math.nan}
    if len(diff) < 2:
        return row
    times = query_resamples(len(diff), resamples, seed)
    row["inflation_ci_low"], row["inflation_ci_high"] = percentile_interval(times @ diff / len(diff), level)
    if np.ptp(diff) > 0:
        row["inflation_p"] = float(stats.ttest_rel(self_scores.to_numpy(float), human_scores.loc[self_scores.index]
                                                   .to_numpy(float)).pvalue)  # fmt: skip
    else:
        row["inflation_p"] = 1.0 if diff[0] == 0 else 0.0
    return row
