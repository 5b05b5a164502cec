"""Stage 4a: the (query, passage) pairs any judge must label: the human-judged pairs in the
top depth of any evaluated system (the BM25 pool, which rankers and oracles reorder, and every
recorded run)."""

from voirdire.formats import atomic_write, read_qrels, read_run
from voirdire.jobscript import start
from voirdire.judges import needed_pairs

log = start(snakemake)
pool = read_run(snakemake.input.pool) if "pool" in snakemake.input.keys() else None
runs = [read_run(path) for path in snakemake.input.get("recorded", [])]
pairs = needed_pairs(read_qrels(snakemake.input.qrels), pool=pool, runs=runs, depth=snakemake.params.depth)
with atomic_write(snakemake.output[0]) as fh:
    pairs.to_csv(fh, sep="\t", index=False)
outside = int((~pairs["in_pool"]).sum()) if pool is not None else None
log.info(
    "%d pairs over %d queries%s",
    len(pairs),
    pairs["query_id"].nunique(),
    "" if outside is None else f"; {outside} of them from outside the BM25 pool (recorded runs)",
)
