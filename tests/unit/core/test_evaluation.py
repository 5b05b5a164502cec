import math

import pandas as pd
import pytest

from voirdire.evaluation import (
    POOL,
    PRIMARY_COLUMNS,
    SCORE_COLUMNS,
    evaluate_measures,
    evaluate_systems,
    per_query_ndcg,
    primary_scores,
    read_scores,
    scores_table,
)
from voirdire.judges import restrict

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


MEASURES = ["nDCG(judged_only=True)@10", "AP@100", "P@2"]
JUDGE = pd.DataFrame(  # a 0/1 judge of the needed pairs only
    [("q", "a", 1), ("q", "b", 1), ("q", "c", 0), ("r", "x", 0)], columns=["query_id", "doc_id", "relevance"]
)
PAIRS = pd.DataFrame([("q", "a"), ("q", "b"), ("r", "x")], columns=["query_id", "doc_id"])  # c: judged, not needed


def small_case():
    runs = {
        "S": [run([("q", "b", 3), ("q", "a", 2), ("q", "c", 1), ("r", "x", 1)])],
        "T": [run([("q", "c", 3), ("q", "a", 2)]), run([("q", "a", 3), ("q", "c", 2)])],  # two draws
    }
    labels = {"human": QRELS, "j": JUDGE}
    table = scores_table("d", runs, labels, {"human": 2, "j": 1}, PAIRS, ["q", "r"], MEASURES, depth=10)
    return runs, labels, table


def test_the_scores_table_is_each_judges_evaluation_and_human_at_pool_the_restricted_one():
    runs, labels, table = small_case()
    assert list(table.columns) == SCORE_COLUMNS
    assert list(dict.fromkeys(table["judge"])) == ["human", "j", POOL]
    assert set(table["dataset"]) == {"d"} and set(table["measure"]) == set(MEASURES)
    expected = {
        "human": evaluate_measures(runs, QRELS, ["q", "r"], MEASURES, binary_threshold=2, depth=10),
        "j": evaluate_measures(runs, JUDGE, ["q", "r"], MEASURES, binary_threshold=1, depth=10),
        # the human labels of the needed pairs only, binarized at the humans' threshold
        POOL: evaluate_measures(runs, restrict(QRELS, PAIRS), ["q", "r"], MEASURES, binary_threshold=2, depth=10),
    }
    for judge, frame in expected.items():
        mine = table[table["judge"] == judge].drop(columns=["dataset", "judge"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, frame)
    # c (human grade 1, not a needed pair) is judged under human and unjudged under human@pool:
    # S ranks b (0), a (3), c (1), so judged-only nDCG@10 differs
    ndcg = table[(table["measure"] == MEASURES[0]) & (table["query_id"] == "q") & (table["system"] == "S")]
    by_judge = ndcg.set_index("judge")["value"]
    assert by_judge["human"] == pytest.approx((3 / math.log2(3) + 1 / 2) / (3 + 1 / math.log2(3)))
    assert by_judge[POOL] == pytest.approx((3 / math.log2(3)) / 3)


def test_primary_scores_keep_the_primary_files_columns_and_order():
    _, _, table = small_case()
    primary = primary_scores(table, MEASURES[0])
    assert list(primary.columns) == PRIMARY_COLUMNS
    assert list(dict.fromkeys(primary["judge"])) == ["human", "j"]  # human@pool only when asked for
    at = table[(table["measure"] == MEASURES[0]) & (table["judge"] != POOL)]
    assert primary["ndcg"].tolist() == at["value"].tolist() and primary["query_id"].tolist() == at["query_id"].tolist()
    picked = primary_scores(table, MEASURES[1], ["j", POOL])
    assert list(dict.fromkeys(picked["judge"])) == ["j", POOL] and list(picked.index) == list(range(len(picked)))
    assert picked["ndcg"].tolist() == (
        table[(table["measure"] == MEASURES[1]) & (table["judge"] == "j")]["value"].tolist()
        + table[(table["measure"] == MEASURES[1]) & (table["judge"] == POOL)]["value"].tolist()
    )


def test_scores_of_no_runs_and_no_tables_are_empty_with_the_columns(tmp_path):
    table = scores_table("d", {}, {"human": QRELS}, {"human": 2}, PAIRS, ["q"], MEASURES)
    assert list(table.columns) == SCORE_COLUMNS and table.empty
    assert list(read_scores([]).columns) == SCORE_COLUMNS
    _, _, table = small_case()
    table.to_parquet(tmp_path / "a.parquet", index=False)
    pd.testing.assert_frame_equal(
        read_scores([tmp_path / "a.parquet"] * 2), pd.concat([table, table], ignore_index=True)
    )
