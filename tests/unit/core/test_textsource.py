"""Texts of the needed passages from MS MARCO v2.1 segmented (voirdire.textsource): the official
JSONL shards read as a stream, and a real Lucene index built here from the same shards with
Anserini's MsMarcoV2DocCollection (as Pyserini's prebuilt msmarco-v2.1-doc-segmented was), give the
same texts; a passage in neither is counted, never given an empty text."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from support.msmarco_segments import MISSING, SEGMENTS, build_index, expected, write_shards

from voirdire.config import check, validate_schema
from voirdire.errors import ConfigError, InputError
from voirdire.formats import read_topics
from voirdire.textsource import (
    DEFAULT_FIELDS,
    index_texts,
    needed_texts,
    open_index,
    record_text,
    segment_texts,
    shard_files,
    source_of,
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    """The shards and their index (built once for the module)."""
    root = tmp_path_factory.mktemp("rag")
    shards = write_shards(root / "shards")
    return shards, build_index(shards, root / "index")


def test_the_index_gives_exactly_the_needed_texts_and_the_shards_the_same(corpus):
    shards, index = corpus
    records = {r["docid"]: r for rs in SEGMENTS.values() for r in rs}
    needed = [SEGMENTS[0][1]["docid"], SEGMENTS[0][4]["docid"], SEGMENTS[1][5]["docid"], MISSING]
    from_index = index_texts(str(index), needed, prebuilt=False)
    assert set(from_index) == set(needed) - {MISSING}  # exactly the needed ones that exist
    assert from_index == {d: expected(records[d]) for d in needed if d != MISSING}
    assert segment_texts(shards, needed) == from_index
    # every segment: the stream and the index agree
    every = list(records)
    assert segment_texts(shards, every) == index_texts(str(index), every, prebuilt=False)


def test_a_missing_passage_is_counted_not_given_an_empty_text(corpus):
    shards, index = corpus
    needed = [SEGMENTS[1][0]["docid"], MISSING, MISSING]
    for spec in ({"index": str(index)}, {"segments": str(shards)}):
        texts, summary = needed_texts(spec, needed)
        assert MISSING not in texts and all(texts.values())
        assert (summary["passages"], summary["found"], summary["missing"]) == (2, 1, 1)
        assert summary["first_missing"] == [MISSING] and summary["source"] == next(iter(spec))


def test_the_stream_opens_only_the_shards_it_needs_and_stops_when_done(tmp_path):
    """Shard 02 is not gzip and not JSON, and shard 00 ends in a broken line: neither is read,
    because no needed id names shard 02 and shard 00's needed segments come first."""
    shards = write_shards(tmp_path / "shards")
    (shards / "msmarco_v2.1_doc_segmented_02.json.gz").write_text("not a shard\n")
    with gzip.open(shards / "msmarco_v2.1_doc_segmented_00.json.gz", "at", encoding="utf-8") as fh:
        fh.write('{"docid": "msmarco_v2.1_doc_00_9#0_0", "segment": broken\n')
    needed = [SEGMENTS[0][0]["docid"], SEGMENTS[1][2]["docid"]]
    assert set(segment_texts(shards, needed)) == set(needed)
    # asking for the broken one reads that line: an error naming the file:line
    with pytest.raises(InputError, match=r"segmented_00\.json\.gz:7: not valid JSON"):
        segment_texts(shards, ["msmarco_v2.1_doc_00_9#0_0"])


def test_a_line_without_a_docid_names_its_file_and_line(tmp_path):
    path = tmp_path / "extra.jsonl"
    path.write_text(json.dumps(SEGMENTS[0][0]) + "\n" + '{"id": "x", "segment": "no docid"}\n')
    with pytest.raises(InputError, match=r"extra\.jsonl:2: a segment line needs a 'docid'"):
        segment_texts(path, ["not-there"])


def test_an_index_without_stored_text_is_an_error_not_empty_texts(tmp_path):
    shards = write_shards(tmp_path / "shards", {0: SEGMENTS[0][:2]})
    index = build_index(shards, tmp_path / "slim", store_raw=False)
    assert index_texts(str(index), [MISSING], prebuilt=False) == {}
    with pytest.raises(InputError, match="stores no text"):
        index_texts(str(index), [SEGMENTS[0][0]["docid"]], prebuilt=False)
    with pytest.raises(InputError, match="not a Lucene index"):
        open_index(str(tmp_path / "shards"), prebuilt=False)
    with pytest.raises(InputError, match="could not open the prebuilt index 'no-such-index'"):
        open_index("no-such-index", prebuilt=True)  # an unknown name: Pyserini downloads nothing


def test_fields_choose_the_text_and_a_json_collection_keeps_its_contents():
    record = SEGMENTS[0][0]
    assert record_text(record) == expected(record) and DEFAULT_FIELDS == ("title", "segment")
    assert record_text(record, ["segment"]) == record["segment"]
    assert record_text(record, ["title", "headings", "segment"]).count("\n") == 3
    assert record_text({"id": "d", "contents": "plain"}) == "plain"
    assert record_text({"docid": "d", "url": "u"}) is None


def test_shards_are_found_by_folder_file_or_glob(tmp_path):
    shards = write_shards(tmp_path / "shards")
    names = ["msmarco_v2.1_doc_segmented_00.json.gz", "msmarco_v2.1_doc_segmented_01.json.gz"]
    assert [p.name for p in shard_files(shards)] == names
    assert [p.name for p in shard_files(str(shards / "*_01.json.gz"))] == names[1:]
    assert [p.name for p in shard_files(shards / names[0])] == names[:1]
    with pytest.raises(InputError, match="no segment files"):
        shard_files(tmp_path / "nowhere")
    assert source_of({"segments": "x", "fields": ["segment"]}) == ("segments", "x")
    with pytest.raises(InputError, match="exactly one of"):
        source_of({"index": "a", "prebuilt": "b"})


def test_topics_in_tsv_and_in_the_2025_jsonl_form(write):
    """TREC RAG 2024's topics.rag24.test.txt is id<TAB>text; 2025's trec_rag_2025_queries.jsonl
    holds an id and a narrative per line (trec-rag.github.io, 2025 guidelines)."""
    tsv = write("topics.rag24.test.txt", "2024-105741\tis it dangerous to have wisdom teeth removed\n")
    assert read_topics(tsv) == {"2024-105741": "is it dangerous to have wisdom teeth removed"}
    lines = [
        {"id": "1", "narrative": "I am trying to understand how the\nIndustrial Revolution began."},
        {"id": 2, "narrative": "Why do reefs bleach?"},
    ]
    jsonl = write("trec_rag_2025_queries.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    assert read_topics(jsonl) == {
        "1": "I am trying to understand how the Industrial Revolution began.",
        "2": "Why do reefs bleach?",
    }
    bad = write("bad.jsonl", '{"id": "1"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1: a JSON topic needs an id"):
        read_topics(bad)


# ----------------------------------------------------------------------------- the config's checks

RUN = "q1 Q0 msmarco_v2.1_doc_00_0#0_0 1 2.0 base\nq2 Q0 msmarco_v2.1_doc_00_0#1_800 1 1.0 base\n"


@pytest.fixture
def rag_config(write, tmp_path) -> dict:
    shards = write_shards(tmp_path / "shards")
    return {
        "datasets": {
            "rag": {
                "source": "local",
                "topics": str(write("t.tsv", "q1\tone\nq2\ttwo\n")),
                "qrels": str(write("q.txt", "q1 0 msmarco_v2.1_doc_00_0#0_0 2\nq2 0 msmarco_v2.1_doc_00_0#1_800 0\n")),
                "texts": {"segments": str(shards)},
            }
        },
        "runs": {
            "base": {"path": str(write("base.run", RUN))},
            "other": {"path": str(write("other.run", RUN.replace("base", "other")))},
        },
        "systems": ["base", "Perfect", "other"],
        "oracles": {"base": "base"},
        "judges": [{"name": "length", "kind": "baseline", "method": "length"}],
    }


def test_a_texts_dataset_checks_and_is_not_labels_only(rag_config):
    plan = check(validate_schema(copy.deepcopy(rag_config)))
    assert plan.fetched_texts("rag") and not plan.labels_only("rag")


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (lambda c: c["datasets"]["rag"].update(corpus="x.jsonl"), "datasets.rag.texts", "without a corpus"),
        (lambda c: c["datasets"]["rag"]["texts"].update(index="idx"), "datasets.rag.texts", "exactly one of"),
        (
            lambda c: c["datasets"]["rag"]["texts"].update(segments="nowhere/"),
            "datasets.rag.texts.segments",
            "not found",
        ),
        (
            lambda c: c["datasets"]["rag"].update(texts={"index": "nowhere"}),
            "datasets.rag.texts.index",
            "index folder not found",
        ),
        (lambda c: c["systems"].append("BM25"), "systems[BM25]", "has no BM25 pool"),
        (lambda c: c.update(oracles={"base": "BM25"}), "oracles.base", "need a base run"),
    ],
)
def test_what_a_texts_dataset_cannot_do_is_one_error_naming_the_key(rag_config, change, key, message):
    change(rag_config)
    with pytest.raises(ConfigError, match=message) as error:
        check(validate_schema(rag_config))
    assert f"'{key}" in str(error.value)
