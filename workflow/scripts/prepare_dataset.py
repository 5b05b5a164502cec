"""Stage 1: normalise a dataset to topics.tsv and the human qrels."""

import json

from voirdire.data import load_dataset
from voirdire.formats import atomic_write, write_qrels, write_topics
from voirdire.wf import start

log = start(snakemake)  # noqa: F821 - injected by Snakemake
dataset = load_dataset(snakemake.params.spec, name=snakemake.wildcards.dataset)  # noqa: F821
write_topics(dataset.topics, snakemake.output.topics)  # noqa: F821
write_qrels(dataset.qrels, snakemake.output.qrels)  # noqa: F821
with atomic_write(snakemake.output.summary) as fh:  # noqa: F821
    json.dump({"dataset": snakemake.wildcards.dataset, **dataset.summary()}, fh, indent=2)  # noqa: F821
log.info("%s", dataset.summary())
