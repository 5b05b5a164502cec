"""Stage 5a: judged-only nDCG@10 per query for every system under one judge."""

from voirdire.evaluation import evaluate_systems
from voirdire.formats import atomic_write, read_qrels, read_run, read_topics
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
# system -> its runs (several: an oracle's random tie-break draws)
runs = {system: [read_run(path) for path in paths] for system, paths in snakemake.params.runs.items()}  # noqa: F821
scale = snakemake.params.scale  # noqa: F821
qrels = read_qrels(snakemake.input.qrels, (scale["min"], scale["max"]), allow_empty=True)  # noqa: F821
scores = evaluate_systems(runs, qrels, read_topics(snakemake.input.topics))  # noqa: F821
scores.insert(0, "judge", snakemake.wildcards.judge)  # noqa: F821
scores.insert(0, "dataset", snakemake.wildcards.dataset)  # noqa: F821
with atomic_write(snakemake.output[0], "wb") as fh:  # noqa: F821
    scores.to_parquet(fh, index=False)
log.info("mean nDCG@10:\n%s", scores.groupby("system", sort=False)["ndcg"].mean().to_string())
