"""Probes, step 2: a persona per sampled query and role (Mohtadi et al., 2026): the pool personas most (and
least) similar to the query or its domain under all-MiniLM-L6-v2, and the two fixed roles."""

import json
import os

from voirdire.formats import atomic_write, read_topics
from voirdire.jobscript import start
from voirdire.probes.personas import assign_personas, minilm_encoder, read_persona_pool

log = start(snakemake)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled; never reach the hub
options = snakemake.params.personas
pool, skipped = read_persona_pool(options["pool"], options["field"], options["template"])
if skipped:
    log.warning("%s: %d lines have no usable %r field and are skipped", options["pool"], skipped, options["field"])
topics = read_topics(snakemake.input.topics)
with open(snakemake.input.sample, encoding="utf-8") as fh:
    queries = json.load(fh)["personas"]["queries"]
table = assign_personas({q: topics[q] for q in queries}, pool, minilm_encoder(), roles=options["roles"])
with atomic_write(snakemake.output[0], "wb") as fh:
    table.to_parquet(fh, index=False)
log.info(
    "%d personas in the pool (%d lines skipped); %d queries x %d roles",
    len(pool),
    skipped,
    len(queries),
    len(options["roles"]),
)
