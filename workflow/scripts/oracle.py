"""Stage 3: an oracle (Perfect or Swap[...]) reordering of the base run's top depth (the BM25 pool,
or a recorded run) by human labels."""

from voirdire.evaluation import cut
from voirdire.formats import ranked, read_qrels, read_run, run_from_rankings, write_run
from voirdire.jobscript import start
from voirdire.systems import oracle_rankings, parse_system

log = start(snakemake)
name = snakemake.wildcards.oracle
slug, _, draw = name.partition("~r")
oracle = parse_system(slug)
qrels = read_qrels(snakemake.input.qrels)
labels = {qid: dict(zip(group["doc_id"], group["relevance"], strict=True)) for qid, group in qrels.groupby("query_id")}
rankings = oracle_rankings(
    oracle,
    ranked(cut(read_run(snakemake.input.pool), snakemake.params.depth)),
    labels,
    tie_break=snakemake.params.tie_break,
    seed=snakemake.params.seed,
    draw=int(draw or 0),
)
write_run(run_from_rankings(rankings), snakemake.output[0], tag=str(oracle))
log.info("%s (tie-break %s, draw %s) over %d queries", oracle, snakemake.params.tie_break, draw or 0, len(rankings))
