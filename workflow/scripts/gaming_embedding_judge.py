"""The gamed system, step 2 (embedding judge): the modified passages graded by cosine similarity
on the footing of the pool's labels (the pool's per-query quantile cut points, or the declared
thresholds), so a modified passage moves no pool label."""

import os

import pandas as pd

from voirdire.embedding_judge import embedding_labels, embedding_labels_against
from voirdire.formats import read_pairs, read_topics, write_qrels
from voirdire.jobscript import start
from voirdire.judges import with_texts
from voirdire.probes.gaming import to_label
from voirdire.texts import provenance_texts

log = start(snakemake)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled; never reach the hub
judge = snakemake.params.judge
topics = read_topics(snakemake.input.topics)
texts, _ = provenance_texts([snakemake.input.passages])
# the pool's labels, as the judge's pool job graded them (the same pairs, texts and function)
pool = with_texts(
    read_pairs(snakemake.input.pairs)[["query_id", "doc_id"]].drop_duplicates(), texts, judge=judge.name, log=log
)
reference, _ = embedding_labels(judge.model, pool, topics, texts, judge.scale, judge.thresholds)
items = to_label(pd.read_parquet(snakemake.input.gamed), snakemake.params.methods)
labels = embedding_labels_against(judge.model, reference, items, topics, judge.scale, judge.thresholds)
write_qrels(labels, snakemake.output[0])
moved = labels.merge(items[["query_id", "doc_id", "original"]], on=["query_id", "doc_id"]).merge(
    reference[["query_id", "doc_id", "relevance"]].rename(columns={"doc_id": "original", "relevance": "before"}),
    on=["query_id", "original"],
    how="left",
)
log.info(
    "%s: %d modified passages graded; grade up %d, down %d, same %d",
    judge.name,
    len(labels),
    int((moved["relevance"] > moved["before"]).sum()),
    int((moved["relevance"] < moved["before"]).sum()),
    int((moved["relevance"] == moved["before"]).sum()),
)
