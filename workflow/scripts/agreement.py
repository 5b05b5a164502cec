"""Stage 5b: label agreement (kappa), system agreement (tau, RBO), paired t-tests, the systems'
scores read from the scores table (stage 5a). Without systems (the label sets audited alone): the
label agreement only, and no paired tests."""

import json
from pathlib import Path

import pandas as pd

from voirdire.audits.labels import label_agreement
from voirdire.evaluation import POOL, read_scores
from voirdire.formats import atomic_write, read_pairs, read_qrels
from voirdire.jobscript import grouped, start
from voirdire.judges import Scale
from voirdire.paper import agreement_tables

log = start(snakemake)
params = snakemake.params
files = grouped(snakemake.input)
scales = {j: Scale(m["min"], m["max"], m["binary_threshold"]) for j, m in params.judges.items()}
names = list(scales)
pairs = read_pairs(snakemake.input.pairs)
labels = {j: read_qrels(path, (scales[j].low, scales[j].high), allow_empty=True) for j, path in files["qrels"].items()}
if files.get("scores"):  # the scores table (none without systems)
    scores = read_scores(files["scores"])
    # human@pool: the human labels of the pairs a judge is asked, the reference a label copier matches
    at_pool = scores["judge"] == POOL
    pool, scores = scores[at_pool].reset_index(drop=True), scores[~at_pool].reset_index(drop=True)
    agreement, significance = agreement_tables(
        dataset=snakemake.wildcards.dataset,
        labels=labels,
        scales=scales,
        pairs=pairs,
        scores=scores,
        measures=params.measure_names,
        oracles=params.oracles,
        alpha=params.alpha,
        rbo_p=params.rbo_p,
        pool_scores=pool,
        correction=params.correction,
        test=params.test,
        resamples=params.resamples,
        seed=params.seed,
        # leaderboard and decisions rest on the user's systems: the oracles (Perfect, swaps) are built from the
        # human labels, so they are left out of both (the oracles question reads them)
        constructed=params.oracles,
    )
else:  # no systems: one row per judge, its labels against the humans' (no measure, no tau, no tests)
    outside = int((~pairs["in_pool"].astype(str).isin(["True", "true", "1"])).sum()) if "in_pool" in pairs else None
    found = label_agreement(labels, scales, pairs, resamples=params.resamples, seed=params.seed)
    agreement = pd.DataFrame(
        [
            {
                "dataset": snakemake.wildcards.dataset,
                "judge": judge,
                "queries": int(pairs["query_id"].nunique()),
                "pairs_outside_pool": outside,
                **row,
            }
            for judge, row in found.items()
        ]
    )
    significance = pd.DataFrame()
    log.info("no systems: Table 2 holds the label agreement of %d judge(s) on %d pairs", len(found), len(pairs))
rows = agreement.to_dict("records")
summaries = {j: json.loads(Path(path).read_text()) for j, path in files.get("summaries", {}).items()}
for row in rows:
    found = summaries.get(row["judge"], {})
    # LLM judges: answers that stayed unparsed after retries (never counted as 0), and cost
    row["unparsed_pairs"] = found.get("unparsed_pairs")
    row["repeat_disagreement"] = found.get("repeat_disagreement_rate")
    # a model litellm's cost map does not price has no cost to show (empty), never a made-up 0
    row["cost_usd"] = found.get("cost_ledger_usd") if found.get("price_known", True) else None
    # recorded judges: labels the file holds for passages outside the pool (not used)
    row["labels_outside_pool"] = found.get("labels_outside_pool")
    row["invalid_labels_dropped"] = found.get("invalid_labels_dropped")
    row["low_coverage"] = bool(row["coverage"] < params.min_coverage)
    if row["low_coverage"] and row.get("measure", params.measure_names[0]) == params.measure_names[0]:
        log.warning(
            "%s labels %.1f%% of the needed pairs, under min_coverage %.0f%%: its scores rest on "
            "fewer documents than the humans'",
            row["judge"],
            100 * row["coverage"],
            100 * params.min_coverage,
        )
agreement = pd.DataFrame(rows)
with atomic_write(snakemake.output.agreement, "wb") as fh:
    agreement.to_parquet(fh, index=False)
with atomic_write(snakemake.output.significance, "wb") as fh:
    significance.to_parquet(fh, index=False)
