"""Stage 4d: a live LLM judge (litellm) labels exactly the needed pairs, through the store.

The same script labels the assistants experiment's sample (rule ``llm_judge_sample``). Texts are
the provenance's: the pool's (and the sample's) passages, with an assistant's rewrites in place.
The pool's job also asks, ahead, what the judge's sample and gamed-system jobs will ask: one
model load (or litellm import) instead of three; those jobs copy the answers from its store.
"""

import pandas as pd

from voirdire.formats import read_pairs, read_topics
from voirdire.jobscript import serving, start
from voirdire.judges import with_texts
from voirdire.llm_judge.job import run_judging_job
from voirdire.llm_judge.tasks import judge_calls
from voirdire.probes.gaming import texts_by_pair, to_label
from voirdire.texts import provenance_texts

log = start(snakemake)
provenance = snakemake.wildcards.provenance
texts, substituted = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))
topics = read_topics(snakemake.input.topics)
with serving(snakemake, snakemake.params.judge) as (judge, served):
    ahead = []
    if snakemake.input.get("sample"):
        sample = with_texts(read_pairs(snakemake.input.sample[0]), texts, judge=judge.name)
        ahead += judge_calls(judge, sample, topics, texts, provenance=provenance)
    if snakemake.input.get("gaming"):
        items = to_label(pd.read_parquet(snakemake.input.gaming[0]), snakemake.params.gaming_methods)
        ahead += judge_calls(judge, items[["query_id", "doc_id"]], topics, texts_by_pair(items), provenance="gaming")
    result = run_judging_job(
        judge,
        pairs=with_texts(read_pairs(snakemake.input.pairs), texts, judge=judge.name, log=log),
        texts=texts,
        topics=topics,
        store_path=snakemake.params.store,
        provenance=provenance,
        qrels_out=snakemake.output.qrels,
        raw_out=snakemake.output.raw,
        summary_out=snakemake.output.summary,
        # the job's share of `--resources llm_slots=N`: never more calls in flight than granted
        max_in_flight=snakemake.resources.llm_slots or None,
        # finished stores of the same judge: answers to unchanged texts are copied, not asked again
        seeds=snakemake.params.seeds,
        served=served,
        ahead=ahead,
    )
log.info("summary: %s (%d passages rewritten)", result, len(substituted))
