"""evaluation.ties: trec_eval reads scores at single precision, so two of Rank1-7B's scores
(0.9999998215687883 and 0.9999998115390605, from its DL19 run) tie there and go by document id
descending; ``exact`` orders by the full score. RR@10 differs between the two, ``exact`` equals
ir_measures' default RR@10, ``trec_eval`` equals pytrec_eval's, and reading the run counts the
query whose top 10 depends on the setting."""

from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from ir_measures import RR

from voirdire.config import validate_schema
from voirdire.errors import InputError
from voirdire.evaluation import cut, evaluate_measures, per_query_scores
from voirdire.probes.gaming import gaming_rows
from voirdire.runs import normalise_run, queries_ordered_by_precision, single_precision_order

HIGH, LOW = 0.9999998215687883, 0.9999998115390605  # Rank1-7B's scores; one float32 apart from neither
QUERIES = ["q1", "q2"]


def run() -> pd.DataFrame:
    """q1: the relevant a above the non-relevant b at full precision, tied with it at single
    precision (b, the higher id, first there); q2: scores far apart."""
    rows = [("q1", "a", HIGH), ("q1", "b", LOW), ("q1", "c", 0.5), ("q2", "a", 0.9), ("q2", "b", 0.8)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).assign(rank=[1, 2, 3, 1, 2])


QRELS = pd.DataFrame(
    [("q1", "a", 1), ("q1", "b", 0), ("q1", "c", 0), ("q2", "a", 0), ("q2", "b", 1)],
    columns=["query_id", "doc_id", "relevance"],
)


def as_dicts(frame: pd.DataFrame, value: str) -> dict:
    found: dict = {}
    for q, d, v in frame[["query_id", "doc_id", value]].itertuples(index=False):
        found.setdefault(q, {})[d] = v
    return found


def test_the_scores_tie_at_single_precision_only():
    assert HIGH != LOW and np.float32(HIGH) == np.float32(LOW)


def test_rr_at_10_differs_between_the_settings_and_exact_is_ir_measures_default():
    runs, qrels = as_dicts(run(), "score"), as_dicts(QRELS, "relevance")
    trec = per_query_scores(run(), QRELS, QUERIES, ["RR@10"], binary_threshold=1, depth=100)["RR@10"]
    exact = per_query_scores(run(), QRELS, QUERIES, ["RR@10"], binary_threshold=1, depth=100, ties="exact")["RR@10"]
    # computed independently: ir_measures' default provider (full precision) and trec_eval's own
    default = {m.query_id: m.value for m in ir_measures.iter_calc([RR @ 10], qrels, runs)}
    pytrec = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(runs)
    assert trec["q1"] != exact["q1"]
    assert exact.to_dict() == pytest.approx(default)
    assert trec.to_dict() == pytest.approx({q: pytrec[q]["recip_rank"] for q in QUERIES})
    assert trec["q2"] == exact["q2"]  # no tie at either precision: the settings agree
    # every measure reads the same order: nDCG@10 too
    both = {
        t: evaluate_measures({"s": [run()]}, QRELS, QUERIES, ["nDCG@10"], binary_threshold=1, ties=t)
        for t in ("trec_eval", "exact")
    }
    ndcg = {t: frame.set_index("query_id")["value"] for t, frame in both.items()}
    assert ndcg["trec_eval"]["q1"] < ndcg["exact"]["q1"] and ndcg["trec_eval"]["q2"] == ndcg["exact"]["q2"]


def test_exact_breaks_equal_scores_by_document_id_descending_as_trec_eval_does():
    equal = pd.DataFrame({"query_id": "q1", "doc_id": ["a", "b"], "score": [0.5, 0.5]})
    for ties in ("trec_eval", "exact"):
        found = per_query_scores(equal, QRELS, ["q1"], ["RR@10"], binary_threshold=1, ties=ties)["RR@10"]
        assert found["q1"] == 0.5  # b first
    assert list(cut(equal, 1, "exact")["doc_id"]) == ["b"]
    with pytest.raises(ValueError, match="ties"):
        cut(equal, 1, "file")


def test_reading_the_run_counts_the_query_whose_top_10_depends_on_the_setting():
    assert queries_ordered_by_precision(run(), 10) == ["q1"]
    assert list(single_precision_order(run())["doc_id"][:2]) == ["b", "a"]
    _, summary = normalise_run(
        run(), dict.fromkeys(QUERIES, "t"), depth=100, unknown_queries="error", name="r", path="r.txt"
    )
    assert summary["queries_top10_single_precision"] == 1
    # a tie at single precision below the top k does not count
    assert queries_ordered_by_precision(run(), 1) == ["q1"] and queries_ordered_by_precision(run()[2:], 1) == []


def test_the_config_key_defaults_to_trec_eval_and_takes_exact_only():
    base = {"datasets": {"d": {"source": "local", "topics": "t.tsv", "qrels": "q.txt"}}, "systems": []}
    assert validate_schema(dict(base))["evaluation"]["ties"] == "trec_eval"
    assert validate_schema({**base, "evaluation": {"ties": "exact"}})["evaluation"]["ties"] == "exact"
    with pytest.raises(InputError, match="ties"):
        validate_schema({**base, "evaluation": {"ties": "float"}})


@pytest.mark.parametrize("ties", ["trec_eval", "exact"])
def test_the_gamed_system_is_read_in_the_order_its_system_is_scored_in(ties):
    """Under the humans the gamed system cannot move (human_delta 0), whichever the setting:
    it is read in the order the systems are scored in, single precision included."""
    runs = {"S": [run()], "T": [run().assign(score=lambda f: f["score"] / 2)]}
    wide = evaluate_measures(runs, QRELS, QUERIES, ["nDCG@10"], binary_threshold=1, ties=ties)
    scores = wide.pivot(index="query_id", columns="system", values="value")
    rows = gaming_rows(
        dataset="d",
        judge="j",
        methods=["stuff"],
        systems=["S"],
        runs=runs,
        scores=scores,
        human_scores=scores,
        judge_qrels=QRELS,
        human_qrels=QRELS,
        labels=QRELS.iloc[:0],
        k=2,
        measure="nDCG@10",
        depth=100,
        binary_threshold=1,
        human_threshold=1,
        ties=ties,
    )
    assert rows.loc[0, "human_delta"] == 0
