"""Stage 4e: an embedding judge (cosine of query and passage embeddings) for exactly the needed pairs.

For the assistants experiment's sample (rule ``embedding_judge_sample``) it grades the pool's pairs
and the sample's together (per-query quartiles on the same footing) and keeps the sample's.
"""

import os

import pandas as pd

from voirdire.formats import read_pairs, read_topics, write_qrels
from voirdire.judging.embedding import embedding_labels
from voirdire.rewriters import provenance_texts
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled; never reach the hub
judge = snakemake.params.judge  # noqa: F821
pairs = read_pairs(snakemake.input.pairs)  # noqa: F821
texts, _ = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))  # noqa: F821
context = pd.concat([read_pairs(p) for p in snakemake.input.get("context", [])] + [pairs])  # noqa: F821
context = context[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)
labels = embedding_labels(judge.model, context, read_topics(snakemake.input.topics), texts, judge.scale, judge.thresholds)  # noqa: F821
labels = labels.merge(pairs[["query_id", "doc_id"]].drop_duplicates(), on=["query_id", "doc_id"])
write_qrels(labels, snakemake.output[0])  # noqa: F821
log.info("%s: grade counts %s", judge.name, labels["relevance"].value_counts().sort_index().to_dict())
