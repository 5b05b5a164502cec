import json

import pytest

from voirdire.errors import InputError
from voirdire.formats import (
    ranked,
    read_corpus,
    read_qrels,
    read_rankgpt,
    read_run,
    read_topics,
    run_from_rankings,
    write_run,
)


def test_qrels_round_trip_and_identical_duplicates(write):
    path = write("q.txt", "1 0 a 3\n1 0 b 0\n\n1 0 a 3\n2 Q0 c 1\n")
    qrels = read_qrels(path)
    assert sorted(map(tuple, qrels.values.tolist())) == [("1", "a", 3), ("1", "b", 0), ("2", "c", 1)]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("1 0 a 3\n1 0 b\n", "has 3 fields, expected 4", 2),
        ("1 0 a 3\n1 0 b x\n", "'x' is not an integer", 2),
        ("1 0 a 4\n", "grade 4 is outside the declared scale 0..3", 1),
        ("1 0 a -1\n", "outside the declared scale", 1),
        ("1 0 a 3\n1 0 b 1\n1 0 a 2\n", "conflicting grades for query 1 document a: 3 (line 1) and 2", 3),
    ],
)
def test_bad_qrels_name_file_and_line(write, text, message, line):
    path = write("bad.qrels", text)
    with pytest.raises(InputError) as info:
        read_qrels(path)
    assert message in str(info.value)
    assert f"{path}:{line}" in str(info.value)


def test_qrels_scale_is_checked_against_declared_scale(write):
    path = write("bin.qrels", "1 0 a 1\n1 0 b 2\n")
    with pytest.raises(InputError, match="outside the declared scale 0..1"):
        read_qrels(path, (0, 1))


def test_missing_and_empty_files(tmp_path, write):
    with pytest.raises(InputError, match="file not found") as info:
        read_qrels(tmp_path / "nope.txt")
    assert "nope.txt" in str(info.value)
    with pytest.raises(InputError, match="no judgments"):
        read_qrels(write("empty.qrels", "\n"))
    assert read_qrels(write("empty2.qrels", ""), allow_empty=True).empty


def test_run_repeated_docid_is_an_error(write):
    path = write("r.run", "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n1 Q0 a 3 0.5 t\n2 Q0 a 1 1.0 t\n")
    with pytest.raises(InputError, match="document a appears twice for query 1 \\(first on line 1\\)") as info:
        read_run(path)
    assert f"{path}:3" in str(info.value)


def test_run_fields_and_numbers(write):
    with pytest.raises(InputError, match="has 5 fields"):
        read_run(write("a.run", "1 Q0 a 1 2.0\n"))
    with pytest.raises(InputError, match="not numbers"):
        read_run(write("b.run", "1 Q0 a one 2.0 t\n"))
    with pytest.raises(InputError, match="empty"):
        read_run(write("c.run", ""))


def test_run_order_and_write_read_round_trip(tmp_path, write):
    # equal scores: the file's rank decides
    run = read_run(write("r.run", "1 Q0 b 2 1.0 t\n1 Q0 a 1 1.0 t\n1 Q0 c 3 3.0 t\n"))
    assert ranked(run) == {"1": ["c", "a", "b"]}
    out = tmp_path / "out.run"
    write_run(run_from_rankings({"1": ["x", "y"], "2": ["z"]}), out, tag="Swap[1]")
    assert out.read_text().splitlines() == [
        "1 Q0 x 1 2.0 Swap[1]",
        "1 Q0 y 2 1.0 Swap[1]",
        "2 Q0 z 1 1.0 Swap[1]",
    ]
    assert ranked(read_run(out)) == {"1": ["x", "y"], "2": ["z"]}


def test_topics(write):
    assert read_topics(write("t.tsv", "1\twhat is  x\n2\ty z\n")) == {"1": "what is  x", "2": "y z"}
    with pytest.raises(InputError, match="qid<TAB>query text") as info:
        read_topics(write("bad.tsv", "1\tok\n2 no tab\n"))
    assert "bad.tsv:2" in str(info.value)
    with pytest.raises(InputError, match="defined twice"):
        read_topics(write("dup.tsv", "1\ta\n1\tb\n"))


def test_corpus(write):
    docs = list(read_corpus(write("c.jsonl", '{"id": "a", "contents": "x"}\n{"docid": 7, "text": "y"}\n')))
    assert docs == [("a", "x"), ("7", "y")]
    with pytest.raises(InputError, match="corpus is empty"):
        list(read_corpus(write("e.jsonl", "\n")))
    with pytest.raises(InputError, match="not valid JSON") as info:
        list(read_corpus(write("b.jsonl", '{"id": "a", "contents": "x"}\n{oops\n')))
    assert "b.jsonl:2" in str(info.value)
    with pytest.raises(InputError, match="needs an 'id'"):
        list(read_corpus(write("m.jsonl", '{"id": "a"}\n')))
    with pytest.raises(InputError, match="repeated"):
        list(read_corpus(write("d.jsonl", '{"id": "a", "contents": "x"}\n{"id": "a", "contents": "y"}\n')))


def test_rankgpt(write):
    data = [
        {
            "query": "q one",
            "hits": [
                {"content": "t1", "qid": 1, "docid": "d1", "rank": 1, "score": 9.5},
                {"content": "t2", "qid": 1, "docid": "d2", "rank": 2, "score": 8.0},
            ],
        },
        {"query": "q two", "hits": [{"content": "t1", "qid": 2, "docid": "d1", "rank": 1, "score": 3.0}]},
    ]
    topics, run, texts = read_rankgpt(write("r.json", json.dumps(data)))
    assert topics == {"1": "q one", "2": "q two"}
    assert ranked(run) == {"1": ["d1", "d2"], "2": ["d1"]}
    assert texts == {"d1": "t1", "d2": "t2"}
    data[0]["hits"].append(dict(data[0]["hits"][0]))
    with pytest.raises(InputError, match="d1 appears twice for query 1"):
        read_rankgpt(write("dup.json", json.dumps(data)))
    with pytest.raises(InputError, match="needs qid, docid, score, content"):
        read_rankgpt(write("bad.json", json.dumps([{"query": "q", "hits": [{"qid": 1}]}])))


def test_written_scores_keep_every_digit(tmp_path, write):
    """Scores that differ only past the 6th decimal (a reranker's P(yes) near 1) stay apart:
    rounded, they would tie, and trec_eval would reorder them by document id."""
    run = read_run(write("r.run", "1 Q0 a 1 0.9999998215687883 t\n1 Q0 b 2 0.9999998115390605 t\n"))
    out = tmp_path / "out.run"
    write_run(run, out, tag="t")
    again = read_run(out)
    assert again["score"].tolist() == run["score"].tolist() and again["score"].nunique() == 2
