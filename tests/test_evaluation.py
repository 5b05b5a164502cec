import math

import pandas as pd
import pytest

from voirdire.evaluation import evaluate_systems, per_query_ndcg

QRELS = pd.DataFrame(
    [("q", "a", 3), ("q", "b", 0), ("q", "c", 1), ("r", "x", 1)],
    columns=["query_id", "doc_id", "relevance"],
)


def run(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).assign(rank=0)


def test_judged_only_ndcg_drops_unjudged_before_the_cut():
    # d is unjudged: judged-only sees b(0), a(3), c(1)
    scores = per_query_ndcg(run([("q", "d", 4), ("q", "b", 3), ("q", "a", 2), ("q", "c", 1)]), QRELS, ["q"])
    dcg = 0 + 3 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 + 1 / math.log2(3)
    assert scores["q"] == pytest.approx(dcg / idcg)


def test_cut_at_ten_after_removing_unjudged():
    docs = [(f"u{i}", 0) for i in range(10)] + [("a", 3)]
    qrels = pd.DataFrame([("q", d, g) for d, g in docs], columns=["query_id", "doc_id", "relevance"])
    ranking = run([("q", f"junk{i}", 100 - i) for i in range(20)] + [("q", d, 50 - i) for i, (d, _) in enumerate(docs)])
    # 20 unjudged junk docs are skipped; a is judged doc 11, so just out of the top 10
    assert per_query_ndcg(ranking, qrels, ["q"])["q"] == 0.0


def test_missing_query_scores_zero_and_draws_average():
    r1 = run([("q", "a", 2), ("q", "b", 1)])
    r2 = run([("q", "b", 2), ("q", "a", 1)])
    table = evaluate_systems({"S": [r1, r2]}, QRELS, ["q", "r"]).set_index("query_id")
    first = per_query_ndcg(r1, QRELS, ["q"])["q"]
    second = per_query_ndcg(r2, QRELS, ["q"])["q"]
    assert first == pytest.approx(3 / (3 + 1 / math.log2(3)))
    assert table.loc["q", "ndcg"] == pytest.approx((first + second) / 2)
    assert table.loc["r", "ndcg"] == 0.0
