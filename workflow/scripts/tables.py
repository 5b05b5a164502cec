"""Stage 6a: Table 1 (system x judge nDCG@10), Table 2 (agreement), significance, fingerprint.
Without systems (the label sets audited alone): Table 2 holds the label agreement, and Table 1
and the significance table have no rows and say why."""

import json
from pathlib import Path

import pandas as pd

from voirdire.evaluation import POOL, PRIMARY_COLUMNS, primary_scores, read_scores
from voirdire.fingerprint import fingerprint
from voirdire.formats import atomic_write
from voirdire.jobscript import grouped, start
from voirdire.judges import HUMAN
from voirdire.manifest import sha256
from voirdire.output import write_table
from voirdire.paper import TABLE1_KEEP, table1
from voirdire.stats import disagreeing
from voirdire.verdict import NO_SYSTEMS

log = start(snakemake)
out = snakemake.output
params = snakemake.params
manifest = sha256(snakemake.input.manifest)
scores = read_scores(snakemake.input.scores)  # every dataset's; none without systems
per_query = primary_scores(scores, params.measures[0]) if len(scores) else pd.DataFrame(columns=PRIMARY_COLUMNS)
judges = [HUMAN] + [j for j in per_query["judge"].unique() if j != HUMAN]
with atomic_write(out.per_query, "wb") as fh:
    per_query.to_parquet(fh, index=False)

datasets = pd.DataFrame([json.loads(Path(p).read_text()) for p in snakemake.input.data_summaries])
if "set_aside" in datasets:  # the ids a `queries` list leaves out, as one readable cell
    datasets["set_aside"] = datasets["set_aside"].map(lambda ids: " ".join(ids) if isinstance(ids, list) else "")
write_table(
    datasets,
    out.datasets,
    title="Datasets: topics and qrels used, what a drop setting left out and a queries list set aside",
    manifest=manifest,
)
write_table(
    table1(
        scores,
        params.systems,
        [HUMAN, POOL, *judges[1:]],
        params.measures,
        resamples=params.resamples,
        seed=params.seed,
    )
    if params.systems
    else pd.DataFrame(columns=["dataset", "system", "measure", HUMAN]),
    out.table1,
    title=f"Table 1: mean score per system and measure under each judge, with its 95% bootstrap interval over "
    f"queries (every system cut at depth {params.depth} before any measure, the part its judges label; "
    "judged-only nDCG@10 is the paper's measure)",
    manifest=manifest,
    keep=TABLE1_KEEP,
    empty=f"{NO_SYSTEMS}; Table 2 has each judge's label agreement",
)
recorded = [
    row | {"dataset": json.loads(Path(p).read_text())["dataset"]}
    for p in snakemake.input.runs_summaries
    for row in json.loads(Path(p).read_text())["runs"]
]
recorded = pd.DataFrame(recorded)
if len(recorded):
    recorded = recorded[["dataset"] + [c for c in recorded.columns if c != "dataset"]]
write_table(
    recorded,
    out.recorded_runs,
    manifest=manifest,
    empty="no recorded runs (runs:) are listed",
    title="Recorded runs: what reading each run file changed (queries whose top 10 is ordered otherwise at "
    "single precision, evaluation.ties; unknown queries dropped, topics missing "
    "and scored 0, queries with tied scores in the top 10, documents below the depth)",
)
agreement = pd.concat([pd.read_parquet(p) for p in snakemake.input.agreement], ignore_index=True)
write_table(
    agreement,
    out.table2,
    title="Table 2: agreement of each judge with the human labels (95% bootstrap intervals over queries; "
    "_vs_pool: against the human labels of the judged pairs)"
    + ("" if params.systems else f"; {NO_SYSTEMS}: label agreement only, on the human-judged pairs"),
    floatfmt=".3f",
    manifest=manifest,
    # counts (a float column where a judge has none to give): an integer where every value is whole
    counts=["labels_outside_pool", "invalid_labels_dropped", "unparsed_pairs"],
    view=[
        "judge",
        "measure",
        "coverage",
        "kappa_binary",
        "kappa_graded",
        "alpha_ordinal",
        "alpha_binary",
        "tau_user_vs_pool",
        "tau_all_vs_pool",
        "rbo_all",
        "reversed_user_vs_pool",
        "disagreements_vs_pool",
    ]
    if params.systems
    else [  # the label columns alone
        "judge",
        "queries",
        "pairs_needed",
        "pairs_labelled",
        "coverage",
        "kappa_binary",
        "kappa_graded",
        "kappa_quadratic",
        "alpha_ordinal",
        "alpha_binary",
        "labels_outside_pool",
        "invalid_labels_dropped",
    ],
)
write_table(
    pd.concat([pd.read_parquet(p) for p in snakemake.input.significance], ignore_index=True),
    out.significance,
    title="Paired tests for every pair of systems: human vs judge",
    empty=NO_SYSTEMS if not params.systems else "no judge besides the human labels is configured",
    floatfmt=".4g",
    manifest=manifest,
    # a person reads the pairs where the judge's test and the humans' part ways
    first=("the pairs where the judge's test and the humans' disagree", disagreeing),
    view=[
        "judge",
        "measure",
        "system_a",
        "system_b",
        "mean_diff_human",
        "p_human_adjusted",
        "mean_diff_judge",
        "p_judge_adjusted",
        "missed",
        "spurious",
        "flipped",
    ],
)
with atomic_write(out.fingerprint) as fh:
    extra = {"manifest_sha256": manifest}
    assistant = {}  # rewritten-* provenances: who rewrote the sampled passages, and which version
    files = grouped(snakemake.input)
    for dataset, path in files.get("rewrites", {}).items():
        summary = json.loads(Path(path).read_text(encoding="utf-8"))
        assistant[dataset] = {k: summary.get(k) for k in ("assistant", "kind", "model", "model_versions", "rewrites")}
    if assistant:
        extra["assistant"] = assistant
    served = {  # judges and rankers on a model server the workflow started: what it served
        f"{dataset}/{name}": json.loads(Path(path).read_text(encoding="utf-8")).get("served")
        for dataset, found in files.get("served", {}).items()
        for name, path in found.items()
    }
    if served:
        extra["served"] = served
    json.dump({**fingerprint(snakemake.params.config), **extra}, fh, indent=2)
log.info("tables written for %d datasets", per_query["dataset"].nunique())
