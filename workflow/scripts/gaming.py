"""The gamed system, step 3: per dataset x judge x method x gamed system, the score of S and of
S#method under the judge (the primary measure, as Table 1 scores), Δ with its interval over
queries, the ranks before and after, the human-better systems passed, and ``climbs``."""

import pandas as pd

from voirdire.evaluation import primary_scores
from voirdire.formats import read_passages, read_qrels, read_run
from voirdire.jobscript import grouped, start
from voirdire.manifest import sha256
from voirdire.output import write_table
from voirdire.probes.gaming import VIEW, combine, gaming_chart, gaming_rows, not_asked

log = start(snakemake)
params, files = snakemake.params, grouped(snakemake.input)
gaming = params.gaming
WHY = {
    "recorded": "a recorded judge's labels are fixed: it cannot be asked about the modified passages",
    "baseline": "a baseline judge is not put to the gamed system (gaming.judges: kinds llm and embedding)",
    "jury": "a jury's labels are its members': it is put to the gamed system only through them",
}


def qrels(path: str, dataset: str, judge: str) -> pd.DataFrame:
    scale = params.judges[dataset][judge]
    return read_qrels(path, (scale["min"], scale["max"]), allow_empty=True)


def wide(scores: pd.DataFrame, judge: str) -> pd.DataFrame:
    """Every system's per-query scores under one judge (query x system), as Table 1 has them."""
    frame = primary_scores(scores, params.measure, [judge])
    return frame.pivot(index="query_id", columns="system", values="ndcg")


frames = []
for dataset, judges in params.judges.items():
    runs = {s: [read_run(p) for p in paths] for s, paths in files["runs"][dataset].items()}
    # the passages that have a text: only those can be modified (a recorded run's may have none)
    texts = set(read_passages(files["passages"][dataset])) if dataset in files.get("passages", {}) else None
    human = qrels(files["human"][dataset], dataset, "human")
    scores_table = pd.read_parquet(files["scores"][dataset])  # every judge, every measure
    human_scores = wide(scores_table, "human")
    for judge, meta in judges.items():
        if judge == "human":
            continue
        if judge not in gaming["judges"]:
            frames.append(not_asked(dataset, judge, WHY.get(meta["kind"], "not listed under gaming.judges")))
            continue
        scores = wide(scores_table, judge).reindex(index=human_scores.index, columns=human_scores.columns)
        labels = qrels(files["gamed"][dataset][judge], dataset, judge)
        rows = gaming_rows(
            dataset=dataset,
            judge=judge,
            methods=gaming["judges"][judge],
            systems=gaming["systems"],
            runs=runs,
            scores=scores,
            human_scores=human_scores,
            judge_qrels=qrels(files["qrels"][dataset][judge], dataset, judge),
            human_qrels=human,
            labels=labels,
            k=gaming["k"],
            measure=params.measure,
            depth=params.depth,
            binary_threshold=meta["binary_threshold"],
            human_threshold=judges["human"]["binary_threshold"],
            alpha=params.alpha,
            test=params.test,
            seed=params.seed,
            texts=texts,
            ties=params.ties,
        )
        for row in rows.drop_duplicates("system").itertuples():
            if row.without_text:
                log.warning(
                    "%s/%s: %d human-judged top-%d passages of %s have no text: not modified, left as they are "
                    "(without_text)",
                    dataset,
                    judge,
                    row.without_text,
                    row.k,
                    row.system,
                )
        for row in rows.itertuples():
            if row.unlabelled:
                log.warning(
                    "%s/%s: %d of %d modified passages of %s have no label (unparsed): unjudged under the judge",
                    dataset,
                    judge,
                    row.unlabelled,
                    row.modified,
                    row.gamed,
                )
            if abs(row.human_delta) > 1e-12:
                log.error(
                    "%s/%s: %s moved under the human labels by %+.6f; by construction it cannot",
                    dataset,
                    judge,
                    row.gamed,
                    row.human_delta,
                )
        frames.append(rows)
table = combine(frames)
left = table.dropna(subset=["without_text"]).drop_duplicates(["dataset", "system"])
left = left[left["without_text"] > 0]
note = "; ".join(f"{r.dataset}/{r.system}: {r.without_text:.0f}" for r in left.itertuples())
title = "The gamed system: would it climb the leaderboard under this judge?"
if note:
    title += f" (human-judged top-k passages without a text, not modified, counted in without_text: {note})"
write_table(
    table,
    snakemake.output.csv,
    title=title,
    floatfmt=".3f",
    manifest=sha256(snakemake.input.manifest),
    view=VIEW,
    # counts and ranks: a float column beside the judges with no gamed system
    counts=["k", "queries", "modified", "unlabelled", "without_text", "rank", "rank_gamed", "systems"],
    empty="no judge is put to the gamed system",
)
gaming_chart(table, snakemake.output.png)
climbing = table[table["climbs"].astype(bool)]
log.info(
    "gaming: %d rows, %d climb: %s",
    len(table),
    len(climbing),
    ", ".join(f"{r.dataset}/{r.judge}/{r.gamed}" for r in climbing.itertuples()) or "none",
)
