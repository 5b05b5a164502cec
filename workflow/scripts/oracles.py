"""Stage 3: every oracle (Perfect, Swap[...]; each random tie-break draw) of a dataset: the base
run's top depth (the BM25 pool, or a recorded run) reordered by human labels, one run file each."""

from voirdire.evaluation import cut
from voirdire.formats import ranked, read_qrels, read_run, run_from_rankings, write_run
from voirdire.jobscript import start
from voirdire.systems import oracle_rankings, parse_system

log = start(snakemake)
params = snakemake.params
qrels = read_qrels(snakemake.input.qrels)
labels = {qid: dict(zip(group["doc_id"], group["relevance"], strict=True)) for qid, group in qrels.groupby("query_id")}
base = ranked(cut(read_run(snakemake.input.pool), params.depth))
for name, path in zip(params.names, snakemake.output, strict=True):
    slug, _, draw = name.partition("~r")
    oracle = parse_system(slug)
    rankings = oracle_rankings(oracle, base, labels, tie_break=params.tie_break, seed=params.seed, draw=int(draw or 0))
    write_run(run_from_rankings(rankings), path, tag=str(oracle))
    log.info("%s (tie-break %s, draw %s) over %d queries", oracle, params.tie_break, draw or 0, len(rankings))
