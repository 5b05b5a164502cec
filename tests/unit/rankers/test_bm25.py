"""BM25 against a real Lucene index built by Pyserini (Anserini) from a JSONL corpus."""

import json
import math

import pytest

from voirdire import bm25

DOCS = {
    "d1": "zebra zebra lion",
    "d2": "zebra tiger tiger tiger",
    "d3": "lion tiger",
    "d4": "giraffe",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    root = tmp_path_factory.mktemp("bm25")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in DOCS.items()))
    assert bm25.build_index(corpus, root / "index") == 4
    return bm25.pyserini_searcher(str(root / "index"), prebuilt=False, k1=0.9, b=0.4)


def lucene_bm25(term: str, docid: str, k1: float = 0.9, b: float = 0.4) -> float:
    """Lucene's BM25 (no k1+1 factor): idf * tf / (tf + k1 (1 - b + b dl/avgdl))."""
    lengths = {d: len(t.split()) for d, t in DOCS.items()}
    avgdl = sum(lengths.values()) / len(DOCS)
    n = sum(term in t.split() for t in DOCS.values())
    idf = math.log(1 + (len(DOCS) - n + 0.5) / (n + 0.5))
    tf = DOCS[docid].split().count(term)
    return idf * tf / (tf + k1 * (1 - b + b * lengths[docid] / avgdl))


def test_scores_match_the_bm25_formula(searcher):
    run = bm25.search(searcher, {"q1": "zebra", "q2": "tiger lion"}, depth=100)
    got = {(r.query_id, r.doc_id): r.score for r in run.itertuples()}
    assert set(got) == {("q1", "d1"), ("q1", "d2"), ("q2", "d1"), ("q2", "d2"), ("q2", "d3")}
    for (qid, docid), score in got.items():
        terms = {"q1": ["zebra"], "q2": ["tiger", "lion"]}[qid]
        expected = sum(lucene_bm25(t, docid) for t in terms)
        # Anserini reports scores rounded to 4 decimals
        assert score == pytest.approx(expected, abs=6e-5), (qid, docid)
    q2 = run[run["query_id"] == "q2"].sort_values("rank")
    assert list(q2["rank"]) == [1, 2, 3]
    assert list(q2["doc_id"])[0] == "d3"  # both terms, shortest document


def test_depth_and_texts(searcher):
    run = bm25.search(searcher, {"q": "zebra lion tiger"}, depth=2)
    assert len(run) == 2
    assert bm25.passage_texts(searcher, ["d4"]) == {"d4": "giraffe"}


def test_not_an_index(tmp_path):
    from voirdire.errors import InputError

    with pytest.raises(InputError, match="not a Lucene index"):
        bm25.pyserini_searcher(str(tmp_path), prebuilt=False, k1=0.9, b=0.4)
