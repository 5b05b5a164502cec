"""Stage 4d: a live LLM judge (litellm) labels exactly the needed pairs, through the store."""

import os

from voirdire.judging.job import load_inputs, run_judging_job
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
# a local model uses exactly the cores Snakemake gave this job (oversubscribed torch threads
# slow generation by 5-20x when another job shares the cores)
os.environ.setdefault("VOIRDIRE_TORCH_THREADS", str(snakemake.threads))  # noqa: F821
pairs, texts, topics = load_inputs(
    snakemake.input.pairs, snakemake.input.passages, snakemake.input.topics  # noqa: F821
)
result = run_judging_job(
    snakemake.params.judge,  # noqa: F821
    pairs=pairs,
    texts=texts,
    topics=topics,
    store_path=snakemake.params.store,  # noqa: F821
    provenance=snakemake.wildcards.provenance,  # noqa: F821
    qrels_out=snakemake.output.qrels,  # noqa: F821
    raw_out=snakemake.output.raw,  # noqa: F821
    summary_out=snakemake.output.summary,  # noqa: F821
    # the job's share of `--resources llm_slots=N`: never more calls in flight than granted
    max_in_flight=snakemake.resources.llm_slots or None,  # noqa: F821
)
log.info("summary: %s", result)
