"""Stage 5a: every configured measure per query for every system under one judge."""

from voirdire.evaluation import evaluate_measures
from voirdire.formats import atomic_write, read_qrels, read_run, read_topics
from voirdire.jobscript import grouped, start

log = start(snakemake)
params = snakemake.params
# system -> its runs (several: an oracle's random tie-break draws)
runs = {system: [read_run(path) for path in paths] for system, paths in grouped(snakemake.input)["runs"].items()}
scale = params.scale
qrels = read_qrels(snakemake.input.qrels, (scale["min"], scale["max"]), allow_empty=True)
scores = evaluate_measures(runs, qrels, read_topics(snakemake.input.topics), params.measures,
                           binary_threshold=scale["binary_threshold"], depth=params.depth)  # fmt: skip
scores.insert(0, "judge", snakemake.wildcards.judge)
scores.insert(0, "dataset", snakemake.wildcards.dataset)
with atomic_write(snakemake.output.measures, "wb") as fh:
    scores.to_parquet(fh, index=False)
# the primary measure (the first), which the audits and figures use
primary = scores[scores["measure"] == params.measures[0]].drop(columns="measure").rename(columns={"value": "ndcg"})
with atomic_write(snakemake.output.primary, "wb") as fh:
    primary[["dataset", "judge", "query_id", "system", "ndcg"]].to_parquet(fh, index=False)
log.info("means:\n%s", scores.groupby(["measure", "system"], sort=False)["value"].mean().to_string())
