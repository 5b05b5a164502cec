"""The gamed system, step 2 (LLM judge): the judge labels the modified passages through its own
judging job (the one call path: cached, concurrent, resumable, costed). The judge's pool job
asked these calls ahead; they are copied from its store."""

import pandas as pd

from voirdire.formats import read_topics
from voirdire.jobscript import serving, start
from voirdire.llm_judge.job import run_judging_job
from voirdire.probes.gaming import texts_by_pair, to_label

log = start(snakemake)
items = to_label(pd.read_parquet(snakemake.input.passages), snakemake.params.methods)
pairs, texts = items[["query_id", "doc_id"]], texts_by_pair(items)
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
        seeds=snakemake.params.seeds,  # the pool's job asked them ahead
        served=served,
    )
log.info("summary: %s", result)
