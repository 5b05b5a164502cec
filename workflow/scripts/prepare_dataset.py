"""Stage 1: normalise a dataset to topics.tsv and the human qrels."""

import json

from voirdire.data import load_dataset
from voirdire.formats import atomic_write, write_qrels, write_topics
from voirdire.jobscript import start

log = start(snakemake)
dataset = load_dataset(snakemake.params.spec, name=snakemake.wildcards.dataset)
write_topics(dataset.topics, snakemake.output.topics)
write_qrels(dataset.qrels, snakemake.output.qrels)
with atomic_write(snakemake.output.summary) as fh:
    json.dump({"dataset": snakemake.wildcards.dataset, **dataset.summary()}, fh, indent=2)
log.info("%s", dataset.summary())
