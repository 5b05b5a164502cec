"""Stage 4e: an embedding judge (cosine of query and passage embeddings) for exactly the needed pairs.

With the assistants experiment configured, the same job grades its sample too (Figure 4): the
pool's pairs and the sample's together, so per-query quartiles stand on the same footing, keeping
the sample's. The pool's own labels are graded on the pool alone, as without the experiment.
The model is loaded once for both.
"""

import os

import pandas as pd

from voirdire.embedding_judge import grades_from_similarity
from voirdire.formats import read_pairs, read_topics, write_qrels
from voirdire.judges import with_texts
from voirdire.rankers.dense import cosine
from voirdire.texts import provenance_texts
from voirdire.wf import start

log = start(snakemake)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is bundled; never reach the hub
judge = snakemake.params.judge
texts, _ = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))
pairs = read_pairs(snakemake.input.pairs)[["query_id", "doc_id"]].drop_duplicates()
pairs = with_texts(pairs, texts, judge=judge.name, log=log)
topics = read_topics(snakemake.input.topics)
sample = read_pairs(snakemake.input.sample[0]) if snakemake.input.sample else pairs.iloc[:0]
everything = pd.concat([pairs, sample[["query_id", "doc_id"]]]).drop_duplicates().reset_index(drop=True)
similarity = pd.Series(
    cosine(judge.model, [topics[q] for q in everything["query_id"]], [texts[d] for d in everything["doc_id"]]),
    index=pd.MultiIndex.from_frame(everything),
)


def graded(frame: pd.DataFrame) -> pd.DataFrame:
    return grades_from_similarity(
        frame, similarity.loc[pd.MultiIndex.from_frame(frame)].to_numpy(), judge.scale, judge.thresholds
    )


labels = graded(pairs)
write_qrels(labels, snakemake.output.qrels)
log.info("%s: grade counts %s", judge.name, labels["relevance"].value_counts().sort_index().to_dict())
if "sample_labels" in snakemake.output.keys():
    kept = graded(everything).merge(sample[["query_id", "doc_id"]].drop_duplicates(), on=["query_id", "doc_id"])
    write_qrels(kept, snakemake.output.sample_labels)
    log.info("%s on the sample: grade counts %s", judge.name, kept["relevance"].value_counts().sort_index().to_dict())
