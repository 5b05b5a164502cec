"""Assistants experiment, step 1: a balanced sample of n human-judged pairs per grade (docs/assistants.md).

Drawn from all human qrels, not only the BM25 pool, so the sampled passages' texts come from
the corpus file of a local dataset, the index, or a RankGPT file's candidates (the only texts
such a dataset has).
"""

import json

import pandas as pd

from voirdire import bm25
from voirdire.assistants.sample import balanced_sample
from voirdire.formats import atomic_write, read_corpus, read_passages, read_qrels, read_rankgpt
from voirdire.jobscript import start

log = start(snakemake)
spec, params = snakemake.params.spec, snakemake.params.rewriting
qrels = read_qrels(snakemake.input.qrels)
pool_texts = read_passages(snakemake.input.passages)
n, seed = params["per_grade"], params["seed"]
if spec["source"] == "rankgpt":
    _, _, texts = read_rankgpt(snakemake.input.candidates)
    texts = {**texts, **pool_texts}
    sample, summary = balanced_sample(qrels, n, seed, has_text=set(texts))
elif spec["source"] == "local":  # the corpus file holds every text: no index (and no Java) needed
    corpus = dict(read_corpus(snakemake.input.corpus))
    sample, summary = balanced_sample(qrels, n, seed, has_text=set(corpus))
    texts = {**pool_texts, **{d: corpus[d] for d in set(sample["doc_id"]) - set(pool_texts)}}
    if summary["without_text"]:
        log.warning("%d judged pairs name passages the corpus lacks: not drawn", summary["without_text"])
else:
    bm25_params = snakemake.params.bm25
    searcher = bm25.dataset_searcher(spec, snakemake.input.get("index"), k1=bm25_params["k1"], b=bm25_params["b"])
    sample, summary = balanced_sample(qrels, n, seed)
    texts = {
        **pool_texts,
        **bm25.passage_texts(searcher, sorted(set(sample["doc_id"]) - set(pool_texts)), strict=False),
    }
    if not set(sample["doc_id"]) <= set(texts):  # judged passages the index lacks: draw again without them
        lacking = set(sample["doc_id"]) - set(texts)
        log.warning("%d sampled passages are not in the index; drawing again without them", len(lacking))
        sample, summary = balanced_sample(qrels, n, seed, has_text=set(qrels["doc_id"]) - lacking)
        texts.update(bm25.passage_texts(searcher, sorted(set(sample["doc_id"]) - set(texts))))
summary["in_pool"] = int(sample["doc_id"].isin(pool_texts).sum())
with atomic_write(snakemake.output.sample) as fh:
    sample.to_csv(fh, sep="\t", index=False)
docs = sorted(set(sample["doc_id"]))
with atomic_write(snakemake.output.passages, "wb") as fh:
    pd.DataFrame({"doc_id": docs, "text": [texts[d] for d in docs]}).to_parquet(fh, index=False)
with atomic_write(snakemake.output.summary) as fh:
    json.dump(summary, fh, indent=2)
for grade, counts in summary["grades"].items():
    if counts["short"]:
        log.warning("human grade %s has %d pairs, fewer than %d: all are taken", grade, counts["available"], n)
log.info("%d pairs sampled (%d passages, %d pairs in the BM25 pool)", len(sample), len(docs), summary["in_pool"])
