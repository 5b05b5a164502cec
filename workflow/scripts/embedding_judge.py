"""Stage 4e: an embedding judge (cosine of query and passage embeddings) for exactly the needed pairs."""

import os

from voirdire.formats import read_pairs, read_passages, read_topics, write_qrels
from voirdire.judging.embedding import embedding_labels
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled; never reach the hub
judge = snakemake.params.judge  # noqa: F821
pairs = read_pairs(snakemake.input.pairs)  # noqa: F821
labels = embedding_labels(judge.model, pairs, read_topics(snakemake.input.topics),  # noqa: F821
                          read_passages(snakemake.input.passages), judge.scale, judge.thresholds)  # noqa: F821
write_qrels(labels, snakemake.output[0])  # noqa: F821
log.info("%s: grade counts %s", judge.name, labels["relevance"].value_counts().sort_index().to_dict())
