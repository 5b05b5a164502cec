"""Probes, step 3: an LLM padder pads the pad test's passages to about twice the length with no
new facts, through the shared call path; checks as for rewrites."""

import json

from voirdire.formats import read_passages
from voirdire.jobscript import start
from voirdire.probes.job import run_pad_job

log = start(snakemake)
texts = read_passages(snakemake.input.passages)
with open(snakemake.input.sample, encoding="utf-8") as fh:
    originals = {row["doc_id"]: texts[row["doc_id"]] for row in json.load(fh)["pad"]}
summary = run_pad_job(
    snakemake.params.padder,
    originals,
    store_path=snakemake.params.store,
    out=snakemake.output.table,
    summary_out=snakemake.output.summary,
    max_in_flight=snakemake.resources.llm_slots or None,
)
if summary["checks"].get("flagged"):
    log.warning(
        "%d of %d paddings are flagged: %s", summary["checks"]["flagged"], summary["passages"], summary["checks"]
    )
log.info("summary: %s", summary)
