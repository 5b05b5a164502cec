"""Every measure the docs name against ir_measures' default pipeline on the same qrels and run,
tied scores included, and RR@k, which trec_eval has no cutoff for, by hand."""

import re
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

from voirdire.errors import ConfigError
from voirdire.evaluation import cut, for_judge, parse_measure, per_query_scores
from voirdire.formats import trec_eval_order

DOCS = Path(__file__).resolve().parents[3] / "docs"
LISTED = [
    "nDCG(judged_only=True)@10",
    "AP@100",
    "RR@10",
    "P@10",
    "R@100",
    "nDCG@10",
    "nDCG@20",
    "RR(rel=1)@5",
    "P(rel=1)@5",
    "AP(rel=2)@100",
    "Success@10",
]
MEASURE = re.compile(r"\b(?:nDCG|AP|RR|P|R|Success)(?:\([^()\s]*\))?@\d+")


def documented() -> list[str]:
    """Every measure in ir_measures' syntax that docs/*.md names, and the ones above."""
    found = {m for path in DOCS.glob("*.md") for m in MEASURE.findall(path.read_text(encoding="utf-8"))}
    return sorted(found | set(LISTED))


def random_inputs(seed: int = 0, queries: int = 30, docs: int = 40) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """A run with many tied scores (integers 0..7) and qrels on a 0-3 scale judging about 60% of it."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(queries)]
    run = pd.DataFrame(
        [(q, f"d{j:02d}", float(rng.integers(0, 8))) for q in qids for j in range(docs)],
        columns=["query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [
            (q, f"d{j:02d}", int(rng.choice(4, p=[0.6, 0.2, 0.12, 0.08])))
            for q in qids
            for j in range(docs)
            if rng.random() < 0.6
        ],
        columns=["query_id", "doc_id", "relevance"],
    )
    return run, qrels, qids


def untied(run: pd.DataFrame) -> pd.DataFrame:
    """The same ranking as trec_eval reads it (score desc, doc id desc), with no two scores equal."""
    ordered = trec_eval_order(run).copy()
    ordered["score"] = -ordered.groupby("query_id").cumcount().astype(float)
    return ordered


def default_pipeline(measure, qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run[["query_id", "doc_id", "score"]])}


def test_the_docs_name_the_measures_this_test_runs():
    found = documented()
    assert {"nDCG(judged_only=True)@10", "AP@100", "RR@10", "P@10", "R@100"} <= set(found)


@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize("depth", [None, 25])
def test_every_documented_measure_equals_ir_measures_default_pipeline(threshold, depth):
    run, qrels, qids = random_inputs()
    measures = documented()
    ours = per_query_scores(run, qrels, qids, measures, binary_threshold=threshold, depth=depth)
    scored = run if depth is None else cut(run, depth)
    wrong = []
    for text in measures:
        measure = for_judge(text, threshold)
        if measure.NAME == "RR" and not ir_measures.pytrec_eval.supports(measure):
            # ir_measures sends RR@k to its MS MARCO provider, which breaks ties by doc id
            # ascending; trec_eval's order is doc id descending: compare on the same order untied
            assert [p.NAME for p in ir_measures.DefaultPipeline.providers if p.supports(measure)] == ["msmarco"]
            reference = default_pipeline(measure, qrels, untied(scored))
        else:
            reference = default_pipeline(measure, qrels, scored)
        expected = [reference.get(q, 0.0) for q in qids]  # a query with nothing to score: 0 (trec_eval -c)
        if ours[text].to_numpy() != pytest.approx(expected, abs=1e-12):
            wrong.append(text)
    assert len(measures) >= 10 and wrong == []


def test_two_names_of_one_measure_under_a_judge_both_get_scores():
    run, qrels, qids = random_inputs(seed=1)
    scores = per_query_scores(run, qrels, qids, ["AP@100", "AP(rel=2)@100", "RR@10", "RR(rel=2)@10"])
    assert scores["AP@100"].sum() > 0 and scores["RR@10"].sum() > 0
    assert scores["AP@100"].equals(scores["AP(rel=2)@100"]) and scores["RR@10"].equals(scores["RR(rel=2)@10"])


def test_rr_at_k_counts_only_the_top_k_in_trec_eval_order_ties_included():
    qrels = pd.DataFrame(
        [("q", "d00", 2), ("r", "b2", 2), ("r", "b1", 0), ("s", "x", 3)], columns=["query_id", "doc_id", "relevance"]
    )
    # q: one document on top, then ten tied at 1.0: trec_eval reads them d09, d08, ..., d00, so the
    # relevant d00 is 11th (RR@10 0; the whole run 1/11; doc id ascending would make it 2nd: 1/2)
    rows = [("q", "z", 5.0)] + [("q", f"d{j:02d}", 1.0) for j in range(10)]
    # r: b1 and b2 tie: b2 (relevant) comes first, second overall: 1/2
    rows += [("r", "top", 9.0), ("r", "b1", 3.0), ("r", "b2", 3.0)]
    # s: the relevant document 12th with no tie: RR@10 0, RR@12 1/12
    rows += [("s", f"n{j:02d}", 20.0 - j) for j in range(11)] + [("s", "x", 1.0)]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    scores = per_query_scores(run, qrels, ["q", "r", "s"], ["RR@10", "RR@12", "RR", "RR(rel=3)@12"])
    assert scores["RR@10"].to_dict() == {"q": 0.0, "r": 0.5, "s": 0.0}
    assert scores["RR@12"].to_dict() == pytest.approx({"q": 1 / 11, "r": 0.5, "s": 1 / 12})
    assert scores["RR"].to_dict() == pytest.approx({"q": 1 / 11, "r": 0.5, "s": 1 / 12})
    assert scores["RR(rel=3)@12"].to_dict() == pytest.approx({"q": 0.0, "r": 0.0, "s": 1 / 12})


def test_judged_only_rr_removes_unjudged_documents_before_the_cut():
    qrels = pd.DataFrame(
        [("q", f"j{i}", 0) for i in range(9)] + [("q", "hit", 2)], columns=["query_id", "doc_id", "relevance"]
    )
    # five unjudged documents on top, then nine judged non-relevant ones, then the relevant one
    rows = [("q", f"u{i}", 100.0 - i) for i in range(5)] + [("q", f"j{i}", 50.0 - i) for i in range(9)]
    run = pd.DataFrame(rows + [("q", "hit", 1.0)], columns=["query_id", "doc_id", "score"])
    scores = per_query_scores(run, qrels, ["q"], ["RR@10", "RR(judged_only=True)@10", "RR(judged_only=True)@9"])
    assert scores.loc["q"].to_dict() == pytest.approx(
        {"RR@10": 0.0, "RR(judged_only=True)@10": 0.1, "RR(judged_only=True)@9": 0.0}
    )


def test_a_measure_no_route_computes_is_refused_and_rr_at_k_is_not():
    for text in ("RR@10", "RR(rel=2)@10", "RR(judged_only=True)@10", "nDCG(judged_only=True)@10", "Success@20"):
        parse_measure(text)
    for text in ("Judged@10", "ERR@10", "nDCG(dcg='exp-log2')@10"):
        with pytest.raises(ConfigError, match="cannot be computed"):
            parse_measure(text, key="evaluation.measures[0]")


@pytest.mark.parametrize("depth", [None, 25])
def test_the_scores_table_of_many_runs_under_many_judges_is_ir_measures_run_by_run(depth):
    """scores_table cuts and converts every run once for every judge: each judge's values (its own
    judged documents, its own threshold), a system's two draws averaged, and human@pool's equal
    ir_measures' default pipeline on each run and judge alone (RR@k on the untied cut, as above)."""
    from voirdire.evaluation import POOL, scores_table

    run_a, human, qids = random_inputs(seed=2)
    run_b, judged_b, _ = random_inputs(seed=3)
    draw, judged_c, _ = random_inputs(seed=4)
    runs = {"A": [run_a], "B": [run_b, draw.assign(score=draw["score"] + 0.5)]}
    labels = {"human": human, "j1": judged_b, "j2": judged_c.assign(relevance=judged_c["relevance"].clip(0, 1))}
    thresholds = {"human": 2, "j1": 3, "j2": 1}
    pairs = human.iloc[::3][["query_id", "doc_id"]]
    measures = ["nDCG(judged_only=True)@10", "nDCG@10", "AP@100", "RR@10", "P@5", "R@20", "Success@3"]
    table = scores_table("d", runs, labels, thresholds, pairs, [*qids, "none"], measures, depth=depth)
    assert list(table["judge"].unique()) == ["human", "j1", "j2", POOL]
    pool = human.merge(pairs, on=["query_id", "doc_id"])
    wrong = []
    for judge, qrels in [*labels.items(), (POOL, pool)]:
        threshold = thresholds["human" if judge == POOL else judge]
        for system, draws in runs.items():
            for text in measures:
                measure = for_judge(text, threshold)
                per_draw = []
                for run in draws:
                    scored = run if depth is None else cut(run, depth)
                    if measure.NAME == "RR":
                        scored = untied(scored)
                    reference = default_pipeline(measure, qrels, scored)
                    per_draw.append(np.array([reference.get(q, 0.0) for q in [*qids, "none"]]))
                expected = sum(per_draw[1:], per_draw[0]) / len(per_draw)
                rows = table[(table["judge"] == judge) & (table["system"] == system) & (table["measure"] == text)]
                if rows["value"].to_numpy() != pytest.approx(expected, abs=1e-12):
                    wrong.append((judge, system, text))
    assert wrong == [] and len(table) == 4 * 2 * len(measures) * (len(qids) + 1)


def test_the_scores_table_is_the_same_bits_in_one_process_or_three():
    from voirdire.evaluation import scores_table

    runs = {name: [random_inputs(seed=seed)[0]] for seed, name in enumerate("ABCDE")}
    _, human, qids = random_inputs(seed=9)
    labels = {"human": human, **{f"j{i}": random_inputs(seed=20 + i)[1] for i in range(4)}}
    args = (
        "d",
        runs,
        labels,
        dict.fromkeys(labels, 2),
        human.iloc[::2][["query_id", "doc_id"]],
        qids,
        ["nDCG(judged_only=True)@10", "AP@100", "RR@10"],
    )
    one, three = scores_table(*args, depth=30), scores_table(*args, depth=30, processes=3)
    pd.testing.assert_frame_equal(one, three, check_exact=True)
    assert list(dict.fromkeys(three["judge"])) == ["human", "j0", "j1", "j2", "j3", "human@pool"]


def test_scores_apart_only_beyond_single_precision_rank_as_trec_eval_ranks_them():
    """trec_eval ranks by the score as a single-precision float, then document id descending:
    two probabilities an LLM reranker tells apart in the 14th digit tie for it. Every measure
    pytrec_eval cuts itself is handed the whole run, so it agrees with ir_measures (Rank1-7B's
    DL19 run has such ties across rank 10)."""
    run = pd.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "z", "m"], "score": [0.99999988206414, 0.99999988206413, 0.5]}
    )
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "z", "m"], "relevance": [3, 0, 1]})
    measures = ["nDCG@1", "P(rel=1)@1", "nDCG(judged_only=True)@1", "AP(rel=1)@1", "R(rel=1)@1", "Success(rel=1)@1"]
    ours = per_query_scores(run, qrels, ["q"], measures, depth=3).loc["q"]
    expected = {text: default_pipeline(for_judge(text, 2), qrels, run)["q"] for text in measures}
    assert np.float32(run["score"][0]) == np.float32(run["score"][1])  # tied for trec_eval: z (id desc) first
    assert expected["nDCG@1"] == 0.0 and ours.to_dict() == pytest.approx(expected, abs=1e-12)
