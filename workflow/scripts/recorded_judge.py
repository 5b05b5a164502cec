"""Stage 4b: a recorded judge's labels for exactly the needed pairs."""

from voirdire.formats import read_pairs, read_qrels, write_qrels
from voirdire.judges import restrict
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
scale = snakemake.params.scale  # noqa: F821
pairs = read_pairs(snakemake.input.pairs)  # noqa: F821
labels = restrict(read_qrels(snakemake.input.labels, (scale["min"], scale["max"])), pairs)  # noqa: F821
write_qrels(labels, snakemake.output[0])  # noqa: F821
log.info("%d of %d needed pairs labelled", len(labels), len(pairs))
if len(labels) < len(pairs):
    log.warning("%d needed pairs have no label; they count as unjudged", len(pairs) - len(labels))
