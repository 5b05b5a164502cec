"""The shipped TREC RAG 2024 config (config/trec-rag24.yaml) on small local files of the official
formats: topics.rag24.test.txt, NIST's and UMBRELA's qrels, two runs, and MS MARCO v2.1 segments
in a gzipped shard with a real Lucene index built from it. It passes `voirdire check` and a dry
run, and the fetch_texts job reads from the index the texts of exactly the needed pairs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from conftest import ROOT, snakemake
from support.msmarco_segments import MISSING, SEGMENTS, build_index, expected, write_shards

from voirdire.cli import main
from voirdire.formats import read_pairs
from voirdire.layout import Layout

SHIPPED = ROOT / "config" / "trec-rag24.yaml"
TOPICS = {"2024-105741": "is it dangerous to have wisdom teeth removed", "2024-145979": "why do coral reefs bleach"}
TOPICS["2024-999999"] = "a topic NIST did not judge"
DOC = [r["docid"] for rs in SEGMENTS.values() for r in rs]


def files(tmp_path) -> dict:
    """The local files, named as the track names them."""
    data = tmp_path / "data" / "rag24"
    (data / "runs").mkdir(parents=True)
    (data / "topics.rag24.test.txt").write_text("".join(f"{q}\t{t}\n" for q, t in TOPICS.items()))
    q1, q2 = list(TOPICS)[:2]
    nist = [(q1, DOC[0], 3), (q1, DOC[1], 0), (q1, DOC[7], 2), (q2, DOC[8], 1), (q2, MISSING, 2), (q2, DOC[2], 0)]
    (data / "2024-retrieval-qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in nist))
    umbrela = [(q, d, min(3, g + 1)) for q, d, g in nist] + [(list(TOPICS)[2], DOC[3], 1)]
    (data / "qrels.rag24.test-umbrela-all.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in umbrela))

    def run(tag: str, ranking: dict[str, list[str]]) -> str:
        return "".join(
            f"{q} Q0 {d} {rank} {10 - rank} {tag}\n" for q, ds in ranking.items() for rank, d in enumerate(ds, 1)
        )

    bm25 = {q1: [DOC[1], DOC[0], DOC[5], DOC[7]], q2: [DOC[2], MISSING, DOC[8]]}
    (data / "run.msmarco-v2.1-doc-segmented.bm25.rag24.test.txt").write_text(run("bm25", bm25))
    (data / "runs" / "team-a.txt").write_text(run("team-a", {q1: [DOC[0], DOC[7], DOC[4]], q2: [DOC[8], DOC[6]]}))
    (data / "runs" / "team-b.txt").write_text(run("team-b", {q1: [DOC[7], DOC[1]], q2: [MISSING, DOC[2]]}))
    shards = write_shards(tmp_path / "msmarco_v2.1_doc_segmented")
    return {"data": data, "segments": shards, "index": build_index(shards, tmp_path / "index")}


def local_config(tmp_path, texts: dict) -> tuple[dict, object]:
    """The shipped config with its files under tmp_path and the texts from ``texts``."""
    config = yaml.safe_load(SHIPPED.read_text())
    found = files(tmp_path)
    data = found["data"]
    spec = config["datasets"]["rag24"]
    spec["topics"] = str(data / "topics.rag24.test.txt")
    spec["qrels"] = str(data / "2024-retrieval-qrels.txt")
    spec["texts"] = {k: str(found[k]) if v is None else v for k, v in texts.items()}
    config["runs"]["bm25-pyserini"]["path"] = str(data / "run.msmarco-v2.1-doc-segmented.bm25.rag24.test.txt")
    config["runs"]["submitted"]["path"] = str(data / "runs")
    config["judges"][0]["qrels"] = str(data / "qrels.rag24.test-umbrela-all.txt")
    config["results"] = str(tmp_path / "results")
    path = tmp_path / "rag24.yaml"
    path.write_text(yaml.safe_dump(config))
    return config, path


def test_the_shipped_config_names_the_official_files_and_the_prebuilt_index():
    config = yaml.safe_load(SHIPPED.read_text())
    spec = config["datasets"]["rag24"]
    assert spec["texts"] == {"prebuilt": "msmarco-v2.1-doc-segmented"}
    assert spec["topics"].endswith("topics.rag24.test.txt") and spec["qrels"].endswith("2024-retrieval-qrels.txt")
    assert config["judges"][0]["qrels"].endswith("qrels.rag24.test-umbrela-all.txt")
    live = next(j for j in config["judges"] if j["kind"] == "llm")
    assert "prompt_file" not in live  # the default: the UMBRELA-style template


@pytest.mark.parametrize("source", ["index", "segments"])
def test_the_rag_config_checks_dry_runs_and_fetches_exactly_the_needed_texts(tmp_path, monkeypatch, capsys, source):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used-by-a-dry-run")
    monkeypatch.chdir(ROOT)
    config, path = local_config(tmp_path, {source: None})
    assert main(["check", "--configfile", str(path)]) == 0, capsys.readouterr().err
    dry = snakemake("-n", "--cores", "1", "--configfile", str(path))
    assert "fetch_texts" in dry.stdout and "bm25 " not in dry.stdout and "bm25_index" not in dry.stdout
    layout = Layout(config["results"])
    snakemake(layout.passages("rag24"), "--cores", "1", "--configfile", str(path))
    pairs = read_pairs(layout.pairs("rag24", "original"))
    passages = pd.read_parquet(layout.passages("rag24"))
    needed = set(pairs["doc_id"])
    assert MISSING in needed and list(TOPICS)[2] not in set(pairs["query_id"])  # unjudged topic dropped
    assert set(passages["doc_id"]) == needed - {MISSING}  # exactly the needed ones the index holds
    records = {r["docid"]: r for rs in SEGMENTS.values() for r in rs}
    assert dict(zip(passages["doc_id"], passages["text"], strict=True)) == {
        d: expected(records[d]) for d in needed - {MISSING}
    }
    summary = json.loads((tmp_path / "results" / "rag24" / "data" / "texts.json").read_text())
    assert (summary["source"], summary["missing"], summary["first_missing"]) == (source, 1, [MISSING])
    log = (tmp_path / "results" / "logs" / "rag24" / "fetch_texts.log").read_text()
    assert "1 passages (1 needed pairs) are not in" in log
