"""Prompt sensitivity: the persona analysis (:mod:`voirdire.probes.sensitivity`) of every
``variants`` group, from its judges' labels of the pool (no call: recorded label sets of a
model's prompt variants are analysed offline).

The systems' per-query scores under each variant and under the humans are computed as Table 2
computes them (:func:`voirdire.probes.tables.condition_scores`): the primary measure, every run
cut at the evaluation depth, each variant's labels binarized at its own judge's binary
threshold."""

from voirdire.jobscript import grouped, start
from voirdire.manifest import sha256
from voirdire.probes import tables as probes

log = start(snakemake)
params, out = snakemake.params, snakemake.output
files = grouped(snakemake.input)
human = probes.read_human(files["human"], params.judges)
labels = probes.read_variant_labels(files["labels"], params.judges)
comparison = probes.sensitivity_results(
    labels,
    human,
    params.baselines,
    probes.read_runs(files.get("runs", {})),
    judge_of=probes.variant_judge,
    groups="variants groups",
    condition="variant",
    **probes.evaluation_of(params),
)
manifest = sha256(snakemake.input.manifest)
probes.write_comparison(comparison, probes.comparison_paths(out), "Prompt sensitivity", manifest)
log.info("prompt sensitivity written")
