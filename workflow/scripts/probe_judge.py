"""Probes, step 4: one LLM judge asked again: swap (passages, result lists), pad, injection and
persona calls, through its own store; plain prompts are copied from its pool job's store."""

import json
import os

import pandas as pd

from voirdire.formats import read_passages, read_topics
from voirdire.probes.job import padded_texts, run_probe_job
from voirdire.wf import serving, start

log = start(snakemake)  # noqa: F821
os.environ.setdefault("VOIRDIRE_TORCH_THREADS", str(snakemake.threads))  # noqa: F821
with open(snakemake.input.sample, encoding="utf-8") as fh:  # noqa: F821
    sample = json.load(fh)
padded = {name: padded_texts(path) for name, path in snakemake.params.padded.items()}  # noqa: F821
personas = pd.read_parquet(snakemake.input.personas) if snakemake.input.get("personas") else None  # noqa: F821
with serving(snakemake, snakemake.params.judge) as (judge, _):  # noqa: F821
    summary = run_probe_job(
        judge,
        sample=sample,
        topics=read_topics(snakemake.input.topics),  # noqa: F821
        texts=read_passages(snakemake.input.passages),  # noqa: F821
        options=snakemake.params.probes,  # noqa: F821
        store_path=snakemake.params.store,  # noqa: F821
        out=snakemake.output.answers,  # noqa: F821
        summary_out=snakemake.output.summary,  # noqa: F821
        padded=padded,
        personas=personas,
        seeds=snakemake.params.seeds,  # noqa: F821
        max_in_flight=snakemake.resources.llm_slots or None,  # noqa: F821
    )
for probe, counts in summary["probes"].items():
    if counts["unparsed"]:
        log.warning("probe %s: %d of %d answers unparsed (counted as such, never as a grade or a win)",
                    probe, counts["unparsed"], counts["calls"])  # fmt: skip
log.info("summary: %s", summary)
