"""Stage 2b: the BM25 top-k pool of every query, and the texts of its passages."""

import pandas as pd

from voirdire import bm25
from voirdire.formats import atomic_write, read_rankgpt, read_topics, write_run
from voirdire.jobscript import start

log = start(snakemake)
spec, params = snakemake.params.spec, snakemake.params.bm25
topics = read_topics(snakemake.input.topics)
if spec["source"] == "rankgpt":
    _, run, texts = read_rankgpt(snakemake.input.candidates)
    run = run[run["query_id"].isin(topics)]
    log.info("candidates from %s (they are the BM25 run)", snakemake.input.candidates)
    depths = run.groupby("query_id").size()
    if depths.max() > params["depth"]:
        log.warning("candidate lists are deeper than bm25.depth=%d; keeping them whole", params["depth"])
else:
    searcher = bm25.dataset_searcher(spec, snakemake.input.get("index"), k1=params["k1"], b=params["b"])
    run = bm25.search(searcher, topics, depth=params["depth"], threads=snakemake.threads)
    texts = bm25.passage_texts(searcher, run["doc_id"].unique())
missing = sorted(set(topics) - set(run["query_id"]))
if missing:
    log.warning("%d topics retrieved nothing (first: %s)", len(missing), missing[0])
write_run(run, snakemake.output.run, tag="BM25")
passages = pd.DataFrame({"doc_id": list(texts), "text": list(texts.values())}).query("doc_id in @run.doc_id")
with atomic_write(snakemake.output.passages, "wb") as fh:
    passages.to_parquet(fh, index=False)
log.info("%d queries, %d candidates, %d passages", run["query_id"].nunique(), len(run), len(passages))
