"""Stage 4c: a null judge (length-only or query-term overlap) for exactly the needed pairs."""

from voirdire.formats import read_pairs, read_passages, read_topics, write_qrels
from voirdire.null_judges import null_labels
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
pairs = read_pairs(snakemake.input.pairs)  # noqa: F821
texts = read_passages(snakemake.input.passages)  # noqa: F821
labels = null_labels(snakemake.params.method, pairs, texts, read_topics(snakemake.input.topics))  # noqa: F821
write_qrels(labels, snakemake.output[0])  # noqa: F821
log.info("%s: grade counts %s", snakemake.params.method, labels["relevance"].value_counts().sort_index().to_dict())  # noqa: F821
