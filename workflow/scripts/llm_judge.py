"""Stage 4d: a live LLM judge (litellm) labels exactly the needed pairs, through the store.

The same script labels the assistants experiment's sample (rule ``llm_judge_sample``). Texts are
the provenance's: the pool's (and the sample's) passages, with an assistant's rewrites in place.
"""

from voirdire.formats import read_pairs, read_topics
from voirdire.jobscript import serving, start
from voirdire.judges import with_texts
from voirdire.llm_judge.job import run_judging_job
from voirdire.texts import provenance_texts

log = start(snakemake)
texts, substituted = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))
with serving(snakemake, snakemake.params.judge) as (judge, served):
    result = run_judging_job(
        judge,
        pairs=with_texts(read_pairs(snakemake.input.pairs), texts, judge=judge.name, log=log),
        texts=texts,
        topics=read_topics(snakemake.input.topics),
        store_path=snakemake.params.store,
        provenance=snakemake.wildcards.provenance,
        qrels_out=snakemake.output.qrels,
        raw_out=snakemake.output.raw,
        summary_out=snakemake.output.summary,
        # the job's share of `--resources llm_slots=N`: never more calls in flight than granted
        max_in_flight=snakemake.resources.llm_slots or None,
        # finished stores of the same judge: answers to unchanged texts are copied, not asked again
        seeds=snakemake.params.seeds,
        served=served,
    )
log.info("summary: %s (%d passages rewritten)", result, len(substituted))
