"""Stage 3b: rerank the BM25 pool with an LLM ranker (RG, PRP, RankT5, monoT5); resumable."""

import json
from pathlib import Path

from voirdire.formats import (
    atomic_write,
    ranked,
    read_run,
    read_topics,
    run_from_rankings,
    write_run,
)
from voirdire.jobscript import serving, start
from voirdire.rankers.rerank import rerank_all, total_bias, unchanged_queries
from voirdire.texts import provenance_texts

log = start(snakemake)
ranker = snakemake.params.ranker
pools = ranked(read_run(snakemake.input.pool))
texts, substituted = provenance_texts(snakemake.input.passages, snakemake.input.get("rewrites"))
topics = read_topics(snakemake.input.topics)
checkpoint = Path(snakemake.params.checkpoint)
rankings = {}
if "original_run" in snakemake.input.keys():  # a Namedlist: `in` would test its values, not its names
    # a query whose reranked head holds no rewritten passage keeps its original ordering
    kept = unchanged_queries(pools, ranker.depth, substituted)
    rankings = {q: r for q, r in ranked(read_run(snakemake.input.original_run)).items() if q in kept}
    log.info(
        "%d of %d queries have no rewritten passage in their top %d: original orderings kept",
        len(rankings),
        len(pools),
        ranker.depth,
    )
with serving(snakemake, ranker) as (ranker, served):
    records = rerank_all(
        ranker,
        {q: p for q, p in pools.items() if q not in rankings},
        topics,
        texts,
        checkpoint,
        store_path=snakemake.params.store,
        max_in_flight=snakemake.resources.llm_slots or None,
    )
rankings |= {q: record["ranking"] for q, record in records.items()}
write_run(run_from_rankings({q: rankings[q] for q in pools}), snakemake.output.run, tag=ranker.name)
with atomic_write(snakemake.output.bias) as fh:
    json.dump(
        {
            "ranker": ranker.name,
            "method": ranker.method,
            "variant": ranker.variant if ranker.method == "prp" else None,
            "model": ranker.model,
            "bias": total_bias(records.values()),
            "served": served,
        },
        fh,
        indent=2,
    )
checkpoint.unlink(missing_ok=True)
log.info("%s reranked %d queries", ranker.name, len(records))
