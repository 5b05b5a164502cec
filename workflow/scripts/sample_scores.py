"""Assistants experiment, Figure 5: a pointwise ranker scores every sampled pair twice, with the
original and with the rewritten text (pairs whose rewrite is not used are left out and counted)."""

import os

import pandas as pd

from voirdire.formats import atomic_write, read_pairs, read_passages, read_topics
from voirdire.jobscript import serving, start
from voirdire.rankers.rerank import backend_for, pointwise_scores

log = start(snakemake)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ranker = snakemake.params.ranker
sample = read_pairs(snakemake.input.sample)
originals = read_passages(snakemake.input.passages)
table = pd.read_parquet(snakemake.input.rewrites)
rewrites = dict(zip(table.loc[table["used"], "doc_id"], table.loc[table["used"], "text"], strict=True))
topics = read_topics(snakemake.input.topics)
kept = sample[sample["doc_id"].isin(rewrites)]
if len(kept) < len(sample):
    log.warning("%d sampled pairs have no used rewrite; they are left out", len(sample) - len(kept))
rows = []
with serving(snakemake, ranker) as (ranker, _):
    backend = backend_for(ranker, snakemake.params.store, snakemake.resources.llm_slots or None)
    for qid, block in kept.groupby("query_id", sort=True):
        ids = list(block["doc_id"])
        original = pointwise_scores(ranker, backend, topics[qid], [originals[d] for d in ids], ids=ids, query_id=qid)
        rewritten = pointwise_scores(ranker, backend, topics[qid], [rewrites[d] for d in ids], ids=ids, query_id=qid)
        rows += [(qid, d, h, o, r) for d, h, o, r in zip(ids, block["human"], original, rewritten, strict=True)]
scores = pd.DataFrame(rows, columns=["query_id", "doc_id", "human", "original", "rewritten"])
with atomic_write(snakemake.output[0]) as fh:
    scores.to_csv(fh, sep="\t", index=False)
log.info(
    "%s scored %d pairs twice; mean difference %.4f",
    ranker.name,
    len(scores),
    (scores["rewritten"] - scores["original"]).mean() if len(scores) else float("nan"),
)
