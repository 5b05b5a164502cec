"""Stage 4c: a null judge (length-only or query-term overlap) for exactly the needed pairs.

For the assistants experiment's sample (rule ``null_judge_sample``) it grades the pool's pairs and
the sample's together, so per-query quartiles have the same footing, and keeps the sample's.
"""

import pandas as pd

from voirdire.baselines import null_labels
from voirdire.formats import read_pairs, read_topics, write_qrels
from voirdire.jobscript import start
from voirdire.judges import with_texts
from voirdire.texts import provenance_texts

log = start(snakemake)
texts, _ = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))
pairs = with_texts(read_pairs(snakemake.input.pairs), texts, judge=snakemake.wildcards.judge, log=log)
context = pd.concat([read_pairs(p) for p in snakemake.input.get("context", [])] + [pairs])
context = context[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)
labels = null_labels(snakemake.params.method, context, texts, read_topics(snakemake.input.topics))
labels = labels.merge(pairs[["query_id", "doc_id"]].drop_duplicates(), on=["query_id", "doc_id"])
write_qrels(labels, snakemake.output[0])
log.info("%s: grade counts %s", snakemake.params.method, labels["relevance"].value_counts().sort_index().to_dict())
