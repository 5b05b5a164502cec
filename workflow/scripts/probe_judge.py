"""Probes, step 4: one LLM judge asked again: swap (passages, result lists), pad, injection and
persona calls, through its own store; plain prompts are copied from its pool job's store."""

import json

import pandas as pd

from voirdire.formats import read_passages, read_topics
from voirdire.jobscript import serving, start
from voirdire.probes.job import padded_texts, run_probe_job

log = start(snakemake)
with open(snakemake.input.sample, encoding="utf-8") as fh:
    sample = json.load(fh)
padded = {name: padded_texts(path) for name, path in snakemake.params.padded.items()}
personas = pd.read_parquet(snakemake.input.personas) if snakemake.input.get("personas") else None
with serving(snakemake, snakemake.params.judge) as (judge, _):
    summary = run_probe_job(
        judge,
        sample=sample,
        topics=read_topics(snakemake.input.topics),
        texts=read_passages(snakemake.input.passages),
        options=snakemake.params.probes,
        store_path=snakemake.params.store,
        out=snakemake.output.answers,
        summary_out=snakemake.output.summary,
        padded=padded,
        personas=personas,
        seeds=snakemake.params.seeds,
        max_in_flight=snakemake.resources.llm_slots or None,
    )
for probe, counts in summary["probes"].items():
    if counts["unparsed"]:
        log.warning(
            "probe %s: %d of %d answers unparsed (counted as such, never as a grade or a win)",
            probe,
            counts["unparsed"],
            counts["calls"],
        )
left = {probe: n for probe, n in summary["left_out_without_text"].items() if n}
if left:
    log.warning(
        "sample rows not asked: their passages have no text (a sample drawn without the texts; counted in the "
        "summary): %s",
        left,
    )
log.info("summary: %s", summary)
