"""The judge as a ranker (circularity; Clarke & Dietz, 2024, arXiv 2412.17156).

A judge's labels define a ranking: sort the top ``depth`` of each query's base run (the
oracles' base: the BM25 pool by default, cut as the oracles cut it) by the judge's grade, ties
(and passages the judge did not label) in the base order. Scoring that ranking with the same
judge's labels is circular: Clarke & Dietz found UMBRELA's own ranking at nDCG > 0.95 under
UMBRELA labels against 0.68-0.72 under humans. The judge x ranker table shows, for every
judge's ranking, its score under the humans (every qrel, and ``human@pool``: the human labels
of the pairs the judges label) and under every judge, each scored as Table 2 scores systems
(the evaluation depth, the scoring judge's binary threshold). The inflation is read against
``human@pool``: a judge scores only the pairs it labels, so against every human qrel even a
judge that copies the human labels would look inflated.

Choice: under the default judged-only nDCG@10 (docs/definitions.md) only the human-judged pool
passages -- exactly the pairs every judge labels -- decide a ranking's score; the judge need
not label the rest of the pool, and this audit makes no call.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..evaluation import POOL as HUMAN_POOL
from ..evaluation import cut
from ..judges import HUMAN
from ..questions import INFO, NA, Cell, judge_rows, number, question
from ..stats import query_mean_test
from .registry import Context, Figure, Table, audit

# HUMAN_POOL, the reference column: the human labels of the pairs the judges label (Table 2's
# human@pool), named once in voirdire.evaluation


def judge_ranking(pool: pd.DataFrame, labels: pd.DataFrame, depth: int | None = None) -> pd.DataFrame:
    """A TREC-style run (query_id, doc_id, rank, score): the pool (its top ``depth`` in trec_eval's
    order, as the oracles take it) sorted by the judge's grade, equal grades in the pool's order
    as the oracles read it (score descending, then rank, then document id)."""
    pool = cut(pool, depth) if depth is not None else pool
    merged = pool.merge(labels[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"], how="left")
    merged["grade"] = merged["relevance"].fillna(-1)  # unlabelled passages go below every grade
    merged = merged.sort_values(
        ["query_id", "grade", "score", "rank", "doc_id"], ascending=[True, False, False, True, True], kind="stable"
    )
    merged["rank"] = merged.groupby("query_id").cumcount() + 1
    merged["score"] = -merged["rank"].astype(float)
    return merged[["query_id", "doc_id", "rank", "score"]].reset_index(drop=True)


def circularity_table(
    scores: pd.DataFrame,
    human: str = HUMAN,
    *,
    reference: str = HUMAN_POOL,
    per_query: Mapping[str, pd.DataFrame] | None = None,
    resamples: int = 1000,
    seed: int = 42,
    level: float = 0.95,
) -> pd.DataFrame:
    """From mean scores of each judge's ranking (rows ``ranker``) under each judge (columns,
    ``reference`` among them): the self-score, the human scores and the inflation per ranking
    judge.

    ``inflation`` = ``self_score`` - ``human_pool_score``: the ranking under its own judge's
    labels against the same ranking under the human labels of the same pairs (``reference``,
    human@pool, as Table 2 has it). Both sides then score the same documents with the same
    ideal DCG, so a judge that copies the human labels has inflation 0 exactly. ``human_score``
    (under every human qrel) stays as a column. The humans' own row is the reference itself:
    its self-score is under ``reference``, inflation 0.

    With ``per_query`` (ranker -> query x judge table of the ranking's per-query scores), the
    inflation carries the cluster-bootstrap interval over queries and the sign-flip test of
    :func:`voirdire.stats.query_mean_test` (seeded), and ``queries`` says how many. No flag:
    a judge's own ranking scores 1 under its own labels, so every judge that differs from the
    humans inflates (p ~ 0 for any noisy judge); the inflation says by how much."""
    if reference not in scores.columns:
        raise ValueError(f"circularity needs the scores under {reference!r} (the human labels of the judged pairs)")
    rows = []
    for ranker in scores.index:
        own = reference if ranker == human else ranker
        row = {
            "ranker": ranker,
            "self_score": scores.loc[ranker, own],
            "human_score": scores.loc[ranker, human],
            "human_pool_score": scores.loc[ranker, reference],
            "inflation": scores.loc[ranker, own] - scores.loc[ranker, reference],
        }
        if per_query is not None:
            row |= inflation_interval(
                per_query[ranker][own], per_query[ranker][reference], resamples=resamples, seed=seed, level=level
            )
        rows.append(row)
    return pd.DataFrame(rows)


def inflation_interval(
    self_scores: pd.Series, reference_scores: pd.Series, *, resamples: int = 1000, seed: int = 42, level: float = 0.95
) -> dict[str, float]:
    """mean(self - reference) over queries: its cluster-bootstrap interval and the two-sided
    sign-flip permutation p of :func:`voirdire.stats.query_mean_test` (each query's gap keeps or
    flips its sign), and how many of the bootstrap draws were undefined."""
    diff = (self_scores - reference_scores.loc[self_scores.index]).to_numpy(dtype=float)
    test = query_mean_test(diff, resamples=resamples, seed=seed, level=level)
    return {
        "queries": test["queries"],
        "inflation_ci_low": test["ci_low"],
        "inflation_ci_high": test["ci_high"],
        "inflation_p": test["p"],
        "inflation_degenerate": test["degenerate"],
    }


# ----------------------------------------------------------------------------- the audit, declared


def _heatmap(table: pd.DataFrame, png: str) -> None:
    from .figures import circularity_heatmap  # matplotlib: only where the figure is drawn

    circularity_heatmap(table, png)


@audit(
    "circularity",
    tables=[
        Table(
            "circularity",
            "Each judge as a ranker: its ranking of the base run scored under the humans, human@pool (the "
            "human labels of the judged pairs) and every judge (inflation = under itself - under human@pool, "
            "95% cluster-bootstrap CI over queries; reported, not flagged: every judge that differs from the "
            "humans scores its own ranking 1)",
            ["dataset", "ranker"],
            view=["ranker", "self_score", "human_score", "human_pool_score", "inflation", "queries"],
            empty="reranks the oracles' base run by each judge's labels",
            counts=["queries"],
            systems=True,
        )
    ],
    figures=[
        Figure(
            "circularity",
            "circularity",
            _heatmap,
            caption="circularity",
            placeholder="no base run for the judges to rerank",
        )
    ],
    systems=False,  # it reranks the base run, which a dataset has with systems (the oracles' base)
)
def audit_circularity(context: Context) -> dict[str, list]:
    """Every judge (the humans too) as a ranker of the base run, scored under every judge and
    human@pool as Table 2 scores systems: one dataset's ``circularity`` rows (none without a base run)."""
    data = context.data
    if data.base is None:
        return {}
    judges = list(data.judges)
    human = context.human
    threshold = {j: context.scale(j).binary_threshold for j in judges}
    threshold[HUMAN_POOL] = threshold[HUMAN]
    scoring = dict(data.labels) | {HUMAN_POOL: human}
    rankings = {j: [judge_ranking(data.base, labels, context.depth)] for j, labels in data.labels.items()}
    under = context.score(rankings, scoring, threshold)
    scores = pd.DataFrame({j: frame.groupby("system")["ndcg"].mean() for j, frame in under.items()})
    scores = scores.loc[judges, [*judges, HUMAN_POOL]]
    per_query = {
        ranker: pd.DataFrame(
            {j: frame[frame["system"] == ranker].set_index("query_id")["ndcg"] for j, frame in under.items()}
        )
        for ranker in judges
    }
    circular = circularity_table(scores, per_query=per_query, seed=context.seed)
    table = pd.concat([circular.set_index("ranker"), scores.add_prefix("under_")], axis=1).reset_index(names="ranker")
    return {"circularity": [table]}


@question(
    "circular_use",
    asks="Does its own ranking look better under it than under the humans?",
    table="circularity",
    needs=("labels", "runs"),
    rule="reported, not flagged: its own ranking scores 1 under its own labels, so every judge that differs "
    "from the humans inflates; the cell says by how much against human@pool",
)
def _circular(rows, judge, context):
    found = judge_rows(rows, judge, "ranker")
    if not len(found):
        return Cell(NA, reason="no base run to rerank")
    row = found.iloc[0].to_dict()
    return Cell(
        INFO,
        number(row, "inflation"),
        number(row, "inflation_ci_low"),
        number(row, "inflation_ci_high"),
        detail=f"under itself {number(row, 'self_score'):.3f}, under human@pool {number(row, 'human_pool_score'):.3f}",
    )
