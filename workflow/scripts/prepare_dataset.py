"""Stage 1: normalise a dataset to topics.tsv and the human qrels."""

from voirdire.data import load_dataset
from voirdire.formats import write_qrels, write_topics
from voirdire.wf import start

log = start(snakemake)  # noqa: F821 - injected by Snakemake
dataset = load_dataset(snakemake.params.spec)  # noqa: F821
write_topics(dataset.topics, snakemake.output.topics)  # noqa: F821
write_qrels(dataset.qrels, snakemake.output.qrels)  # noqa: F821
log.info("%d topics, %d human qrels", len(dataset.topics), len(dataset.qrels))
