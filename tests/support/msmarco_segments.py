"""MS MARCO v2.1 segments in the official format (a few, in gzipped shards) and a real Lucene
index of them, for the TREC RAG tests (tests/unit/core/test_textsource.py,
tests/workflow/test_trec_rag.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def segment(shard: int, doc: int, seg: int, text: str) -> dict:
    """One segment in the official format (trec-rag.github.io, 2024 corpus announcement)."""
    return {
        "docid": f"msmarco_v2.1_doc_{shard:02d}_{doc * 1000}#{seg}_{doc * 4000 + seg * 800}",
        "url": f"https://example.org/{shard}/{doc}",
        "title": f"Document {doc} of shard {shard}",
        "headings": f"Document {doc}\nPart {seg}\n",
        "segment": text,
        "start_char": seg * 500,
        "end_char": seg * 500 + len(text),
    }


SEGMENTS = {
    0: [
        segment(0, d, s, f"Segment {s} of document {d}: tides follow the moon ({d}{s}).")
        for d in range(3)
        for s in range(2)
    ],
    1: [
        segment(1, d, s, f"Shard one, document {d}, segment {s}: coral reefs bleach.")
        for d in range(2)
        for s in range(3)
    ],
}
MISSING = "msmarco_v2.1_doc_01_999000#0_0"
"""An id in the official form that is in no shard and not in the index."""


def write_shards(folder: Path, segments: dict[int, list[dict]] = SEGMENTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for shard, records in segments.items():
        with gzip.open(folder / f"msmarco_v2.1_doc_segmented_{shard:02d}.json.gz", "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in records)
    return folder


def build_index(shards: Path, index: Path, *, store_raw: bool = True) -> Path:
    """A real Lucene index of the shards, built by Anserini's indexer (Pyserini's Java API)."""
    from voirdire.bm25 import prepare_jvm

    prepare_jvm()
    from pyserini.pyclass import autoclass

    args = ["-collection", "MsMarcoV2DocCollection", "-generator", "DefaultLuceneDocumentGenerator"]
    args += ["-input", str(shards), "-index", str(index), "-threads", "1"]
    autoclass("io.anserini.index.IndexCollection").main(args + (["-storeRaw"] if store_raw else []))
    return index


def expected(record: dict) -> str:
    """A segment's text as docs/trec-rag.md defines it: the title, a newline, the segment."""
    return f"{record['title']}\n{record['segment']}"
