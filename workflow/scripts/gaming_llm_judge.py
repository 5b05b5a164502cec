"""The gamed system, step 2 (LLM judge): the judge labels the modified passages through its own
judging job (the one call path: cached, concurrent, resumable, costed)."""

import pandas as pd

from voirdire.formats import read_topics
from voirdire.judging.job import run_judging_job
from voirdire.wf import serving, start

log = start(snakemake)
gamed = pd.read_parquet(snakemake.input.passages)
gamed = gamed[gamed["method"].isin(snakemake.params.methods)]
pairs = gamed[["query_id", "gamed_id"]].rename(columns={"gamed_id": "doc_id"})
# a stuffed text belongs to its query (it carries that query's terms): texts by (query, passage)
texts = dict(zip(zip(gamed["query_id"], gamed["gamed_id"], strict=True), gamed["text"], strict=True))
with serving(snakemake, snakemake.params.judge) as (judge, served):
    result = run_judging_job(
        judge,
        pairs=pairs,
        texts=texts,
        topics=read_topics(snakemake.input.topics),
        store_path=snakemake.params.store,
        provenance="gaming",
        qrels_out=snakemake.output.qrels,
        raw_out=snakemake.output.raw,
        summary_out=snakemake.output.summary,
        max_in_flight=snakemake.resources.llm_slots or None,
        served=served,
    )
log.info("summary: %s", result)
