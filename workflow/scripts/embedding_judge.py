"""Stage 4e: an embedding judge (cosine of query and passage embeddings) for exactly the needed pairs.

With the assistants experiment configured, the same job grades its sample too (Figure 4), on the
footing of the pool's pairs and the sample's together; the pool's own labels are graded on the
pool alone, as without the experiment (:func:`voirdire.embedding_judge.embedding_labels`). The
model is loaded once for both.
"""

import os

from voirdire.embedding_judge import embedding_labels
from voirdire.formats import read_pairs, read_topics, write_qrels
from voirdire.jobscript import start
from voirdire.judges import with_texts
from voirdire.texts import provenance_texts

log = start(snakemake)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled; never reach the hub
judge = snakemake.params.judge
texts, _ = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))
pairs = read_pairs(snakemake.input.pairs)[["query_id", "doc_id"]].drop_duplicates()
pairs = with_texts(pairs, texts, judge=judge.name, log=log)
sample = read_pairs(snakemake.input.sample[0]) if snakemake.input.sample else None
labels, sample_labels = embedding_labels(
    judge.model, pairs, read_topics(snakemake.input.topics), texts, judge.scale, judge.thresholds, sample=sample
)
write_qrels(labels, snakemake.output.qrels)
log.info("%s: grade counts %s", judge.name, labels["relevance"].value_counts().sort_index().to_dict())
if "sample_labels" in snakemake.output.keys():
    write_qrels(sample_labels, snakemake.output.sample_labels)
    log.info(
        "%s on the sample: grade counts %s",
        judge.name,
        sample_labels["relevance"].value_counts().sort_index().to_dict(),
    )
