"""Stage 4b: a recorded judge's labels for exactly the needed pairs, and what the file held beyond them."""

import json

from voirdire.formats import atomic_write, read_pairs, read_qrels_counted, write_qrels
from voirdire.jobscript import start
from voirdire.judges import recorded_coverage

log = start(snakemake)
params = snakemake.params
pairs = read_pairs(snakemake.input.pairs)
raw, dropped = read_qrels_counted(snakemake.input.labels, (params.scale["min"], params.scale["max"]),
                                  invalid=params.invalid_labels)  # fmt: skip
labels, summary = recorded_coverage(snakemake.wildcards.judge, snakemake.input.labels, raw, pairs)
summary["invalid_labels_dropped"] = dropped["lines_out_of_scale"] + dropped["conflicting_lines"]
summary |= dropped
if summary["invalid_labels_dropped"]:
    log.warning("invalid_labels: drop: %d lines graded outside %d..%d and %d pairs graded twice with different "
                "grades (%d lines, both sides) left out of %s", dropped["lines_out_of_scale"], params.scale["min"],
                params.scale["max"], dropped["conflicting_pairs"], dropped["conflicting_lines"], snakemake.input.labels)  # fmt: skip
write_qrels(labels, snakemake.output.qrels)
with atomic_write(snakemake.output.summary) as fh:
    json.dump(summary, fh, indent=2)
log.info("%s", summary)
if summary["pairs_labelled"] < summary["pairs"]:
    log.warning("%d needed pairs have no label; they count as unjudged", summary["pairs"] - summary["pairs_labelled"])
if summary["labels_outside_pool"]:
    log.warning("%d labels are for passages outside the pool; they are not used (counted in Table 2)",
                summary["labels_outside_pool"])  # fmt: skip
if len(raw) and raw["relevance"].max() < params.scale["binary_threshold"]:
    log.warning("no label in %s reaches binary_threshold %d (its grades go up to %d): every pair counts as "
                "non-relevant in binary kappa and binary measures; is the judge's scale declared?",
                snakemake.input.labels, params.scale["binary_threshold"], raw["relevance"].max())  # fmt: skip
