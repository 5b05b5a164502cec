"""Stage 4e: a jury's labels of exactly the needed pairs, from its members' labels of them, and the
members' error correlation against the humans (docs/juries.md): the jury's qrels, its row of the
``jury`` table and its member pairs' rows of ``jury_correlation``."""

from voirdire.formats import read_pairs, read_qrels, write_qrels
from voirdire.jobscript import grouped, start
from voirdire.judges import Scale
from voirdire.jury import NO_VERDICT, SHORT, jury_tables, jury_verdicts
from voirdire.output import write_table

log = start(snakemake)
params, out = snakemake.params, snakemake.output
jury = params.jury
files = grouped(snakemake.input)["members"]
scales = {name: Scale(m["min"], m["max"], m["binary_threshold"]) for name, m in params.scales.items()}
pairs = read_pairs(snakemake.input.pairs)
labels = {
    name: read_qrels(files[name], (scales[name].low, scales[name].high), allow_empty=True) for name in jury.members
}
human = read_qrels(snakemake.input.human, (scales["human"].low, scales["human"].high))
verdicts = jury_verdicts(jury, pairs, labels, scales)
write_qrels(verdicts.labels, out.qrels)
log.info(
    "%s: %d of %d pairs labelled (%s of %s, quorum %d)",
    jury,
    len(verdicts.labels),
    len(verdicts.pairs),
    jury.aggregate,
    ", ".join(jury.members),
    jury.quorum,
)
for name, missing in verdicts.missing().items():
    if missing:
        log.warning(
            "%s: member %s gave no answer to %d of the %d pairs (unparsed, uncovered or unlabelled): "
            "counted, never read as a grade",
            jury.name,
            name,
            missing,
            len(verdicts.pairs),
        )
if verdicts.count(SHORT):
    log.warning(
        "%s: %d pairs have fewer than %d answering members: no label (short of a quorum)",
        jury.name,
        verdicts.count(SHORT),
        jury.quorum,
    )
if verdicts.count(NO_VERDICT):
    log.warning(
        "%s: %d pairs have no strict majority among their answering members: no verdict, no label",
        jury.name,
        verdicts.count(NO_VERDICT),
    )
row, correlation = jury_tables(
    snakemake.wildcards.dataset, jury, verdicts, human, resamples=params.resamples, seed=params.seed
)
log.info(
    "%s: n_eff %.2f [%.2f, %.2f] of %d members (mean error correlation %.3f)",
    jury.name,
    row["n_eff"].iat[0],
    row["n_eff_ci_low"].iat[0],
    row["n_eff_ci_high"].iat[0],
    len(jury.members),
    row["mean_correlation"].iat[0],
)
where = f"{jury.name}, {snakemake.wildcards.provenance}"
write_table(row, out.table, title=f"Jury ({where}): its labels and its members' worth", empty="no jury")
write_table(correlation, out.correlation, title=f"Jury ({where}): its members' error correlation", empty="no pair")
