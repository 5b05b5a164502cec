"""Stage 4b: a recorded judge's labels for exactly the needed pairs, and what the file held beyond them."""

import json

from voirdire.formats import atomic_write, read_pairs, read_qrels, write_qrels
from voirdire.judges import recorded_coverage
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
params = snakemake.params  # noqa: F821
pairs = read_pairs(snakemake.input.pairs)  # noqa: F821
raw = read_qrels(snakemake.input.labels, (params.scale["min"], params.scale["max"]))  # noqa: F821
labels, summary = recorded_coverage(snakemake.wildcards.judge, snakemake.input.labels, raw, pairs)  # noqa: F821
write_qrels(labels, snakemake.output.qrels)  # noqa: F821
with atomic_write(snakemake.output.summary) as fh:  # noqa: F821
    json.dump(summary, fh, indent=2)
log.info("%s", summary)
if summary["pairs_labelled"] < summary["pairs"]:
    log.warning("%d needed pairs have no label; they count as unjudged", summary["pairs"] - summary["pairs_labelled"])
if summary["labels_outside_pool"]:
    log.warning("%d labels are for passages outside the pool; they are not used (counted in Table 2)",
                summary["labels_outside_pool"])  # fmt: skip
