"""Stage 4a: the (query, passage) pairs any judge must label: human-judged pool candidates."""

from voirdire.formats import atomic_write, read_qrels, read_run
from voirdire.judges import needed_pairs
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
pairs = needed_pairs(read_run(snakemake.input.pool), read_qrels(snakemake.input.qrels))  # noqa: F821
with atomic_write(snakemake.output[0]) as fh:  # noqa: F821
    pairs.to_csv(fh, sep="\t", index=False)
log.info("%d pairs over %d queries", len(pairs), pairs["query_id"].nunique())
