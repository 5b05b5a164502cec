"""Stage 5a: every configured measure per query for every system under every judge of the
dataset, and under human@pool (the human labels of the needed pairs): one long table."""

from voirdire.evaluation import scores_table
from voirdire.formats import atomic_write, read_pairs, read_qrels, read_run, read_topics
from voirdire.jobscript import grouped, start

log = start(snakemake)
params = snakemake.params
files = grouped(snakemake.input)
# system -> its runs (several: an oracle's random tie-break draws); none without systems
runs = {system: [read_run(path) for path in paths] for system, paths in files.get("runs", {}).items()}
labels = {
    judge: read_qrels(files["qrels"][judge], (scale["min"], scale["max"]), allow_empty=True)
    for judge, scale in params.judges.items()
}
scores = scores_table(
    snakemake.wildcards.dataset,
    runs,
    labels,
    {judge: scale["binary_threshold"] for judge, scale in params.judges.items()},
    read_pairs(snakemake.input.pairs),
    read_topics(snakemake.input.topics),
    params.measures,
    depth=params.depth,
    processes=snakemake.threads,
    ties=params.ties,
)
with atomic_write(snakemake.output.scores, "wb") as fh:
    scores.to_parquet(fh, index=False)
log.info("means:\n%s", scores.groupby(["judge", "measure", "system"], sort=False)["value"].mean().to_string())
