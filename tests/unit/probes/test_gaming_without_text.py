"""The gamed system and the length audit on a run whose top passages include one without a text
(a recorded run's passage beyond the candidates whose texts the workflow holds): it is left as it
is, never modified nor measured, and counted; nothing else moves."""

import math

import pandas as pd

from voirdire.audits.length import (
    by_decile,
    length_bias,
    system_lengths_by_judge,
    top_pairs_without_text,
    with_lengths,
)
from voirdire.evaluation import MEASURE, evaluate_systems
from voirdire.probes.gaming import METHODS, game, gaming_rows, items_to_modify, modified_texts

QUERIES = [f"q{i}" for i in range(6)]
TOPICS = {q: "alpha beta" for q in QUERIES}
GRADES = {"x": 3, "d1": 3, "d2": 2, "d3": 1, "d4": 0, "d5": 0}  # x: retrieved by the run only, no text
TEXTS = {d: f"passage {d} " + "word " * (5 + i) for i, d in enumerate(GRADES) if d != "x"}
ORDERS = {"Run": ["x", "d3", "d1", "d2", "d4", "d5"], "Other": ["d1", "d2", "d3", "d4", "d5", "x"]}


def run(order: list[str]) -> pd.DataFrame:
    rows = [(q, d, float(len(order) - i)) for q in QUERIES for i, d in enumerate(order)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


RUNS = {name: [run(order)] for name, order in ORDERS.items()}
HUMAN = pd.DataFrame(
    [(q, d, g) for q in QUERIES for d, g in GRADES.items()], columns=["query_id", "doc_id", "relevance"]
)


def test_a_passage_without_a_text_is_not_modified_and_is_counted():
    items, unjudged = items_to_modify(RUNS["Run"], 3, HUMAN, TEXTS)
    every, _ = items_to_modify(RUNS["Run"], 3, HUMAN)
    assert unjudged == 0 and len(every) - len(items) == len(QUERIES)  # x, in every query's top 3
    gamed = modified_texts(items, METHODS, TOPICS, TEXTS)  # items without texts: a KeyError
    assert "x" not in set(gamed["doc_id"])
    renamed, swap = game(RUNS["Run"][0], 3, "stuff", TEXTS)
    assert {d for _, d in swap} == {"d3", "d1"} and "x" in set(renamed["doc_id"])
    # the judge labels what it could read as the humans do (x: uncovered, unjudged under it)
    judge = HUMAN[HUMAN["doc_id"] != "x"]
    labels = pd.DataFrame(
        {"query_id": gamed["query_id"], "doc_id": gamed["gamed_id"], "relevance": [GRADES[d] for d in gamed["doc_id"]]}
    )
    scores = evaluate_systems(RUNS, judge, QUERIES, depth=10).pivot(index="query_id", columns="system", values="ndcg")
    human = evaluate_systems(RUNS, HUMAN, QUERIES, depth=10).pivot(index="query_id", columns="system", values="ndcg")
    rows = gaming_rows(
        dataset="d",
        judge="j",
        methods=["stuff"],
        systems=["Run"],
        runs=RUNS,
        scores=scores,
        human_scores=human,
        judge_qrels=judge,
        human_qrels=HUMAN,
        labels=labels,
        k=3,
        measure=str(MEASURE),
        depth=10,
        binary_threshold=2,
        human_threshold=2,
        texts=TEXTS,
    )
    row = rows.iloc[0]
    assert row["without_text"] == len(QUERIES) and row["modified"] == 2 * len(QUERIES)
    assert row["unlabelled"] == 0  # x is not a label the judge failed to give
    assert row["delta"] == 0 and row["human_delta"] == 0


def test_the_length_audit_leaves_out_and_counts_the_pairs_without_a_text():
    both = HUMAN.rename(columns={"relevance": "human"}).assign(judge=HUMAN["relevance"])
    measured = with_lengths(both, TEXTS)  # today: KeyError 'x'
    assert measured["words"].isna().sum() == len(QUERIES)
    found = length_bias(measured, permutations=0)
    readable = measured[measured["words"].notna()]
    assert found["pairs_without_text"] == len(QUERIES) and found["pairs"] == len(readable)
    assert found["rho_overall"] == length_bias(readable, permutations=0)["rho_overall"]
    assert by_decile(measured).equals(by_decile(readable))
    # across systems: x is in Run's top 3 on every query, and in no system's top 3 under Other alone
    judged = {"human": HUMAN, None: None}
    assert top_pairs_without_text(RUNS, TEXTS, judged, 3) == {"human": len(QUERIES), None: len(QUERIES)}
    assert top_pairs_without_text({"Other": RUNS["Other"]}, TEXTS, judged, 3) == {"human": 0, None: 0}
    lengths = system_lengths_by_judge(RUNS, TEXTS, judged, 3)
    words = {d: len(t.split()) for d, t in TEXTS.items()}
    assert math.isclose(lengths["human"]["Run"], (words["d3"] + words["d1"]) / 2)
