"""Assistants experiment tables of one rewritten provenance: Figure 4 and the label shift
(experiment 1), the substitution test (experiments 2 and 3), and the checks on every rewrite."""

import pandas as pd

from voirdire.assistants.experiments import LABEL_SHIFT_VIEW, SUBSTITUTION_VIEW, label_shift, substitution
from voirdire.assistants.figures import figure4
from voirdire.assistants.preference import VIEW as PREFERENCE_VIEW
from voirdire.assistants.preference import rewrite_self_preference
from voirdire.evaluation import primary_scores
from voirdire.formats import read_pairs, read_qrels, read_run
from voirdire.jobscript import start
from voirdire.manifest import sha256
from voirdire.output import write_table

log = start(snakemake)
params, out = snakemake.params, snakemake.output
provenance = snakemake.wildcards.provenance
assistant = provenance.removeprefix("rewritten-")
files = snakemake.input  # (name-keyed: sample/DATASET, labels/DATASET/PROVENANCE/JUDGE, scores/DATASET/PROVENANCE, ...)
manifest = sha256(snakemake.input.manifest)
alpha = params.alpha


def labels_of(path: str, dataset: str, judge: str) -> pd.Series:
    """A judge's labels of the sample, read on its declared scale (a grade outside it is an error)."""
    scale = params.scales[dataset][judge]
    qrels = read_qrels(path, (scale["min"], scale["max"]), allow_empty=True)
    return qrels.set_index(["query_id", "doc_id"])["relevance"]


# --- experiment 1 (Figure 4): the sample labelled with original and with rewritten texts
label_rows, check_rows, in_pool = [], [], {}
for dataset in params.datasets:
    sample = read_pairs(files[f"sample/{dataset}"]).astype({"human": int})
    rewrites = pd.read_parquet(files[f"rewrites/{dataset}"])
    used = set(rewrites.loc[rewrites["used"], "doc_id"])
    kept = sample[sample["doc_id"].isin(used)]
    if len(kept) < len(sample):
        log.warning(
            "%s: %d of %d sampled pairs have no used rewrite; left out of experiment 1",
            dataset,
            len(sample) - len(kept),
            len(sample),
        )
    for judge in params.sample_judges[dataset]:
        original = labels_of(files[f"labels/{dataset}/original/{judge}"], dataset, judge)
        rewritten = labels_of(files[f"labels/{dataset}/{provenance}/{judge}"], dataset, judge)
        index = pd.MultiIndex.from_frame(kept[["query_id", "doc_id"]])
        label_rows.append(
            kept.assign(
                dataset=dataset,
                assistant=assistant,
                judge=judge,
                original=original.reindex(index).to_numpy(dtype=float),
                rewritten=rewritten.reindex(index).to_numpy(dtype=float),
            )
        )
    checked = rewrites.drop(columns=["original", "text"]).assign(dataset=dataset, assistant=assistant)
    check_rows.append(checked)
    pool = read_run(files[f"pool/{dataset}"])
    in_pool[dataset] = {
        "substituted_passages": len(used),
        "in_pool_passages": int(pool["doc_id"].drop_duplicates().isin(used).sum()),
        "in_pool_pairs": int(pool["doc_id"].isin(used).sum()),
    }
    log.info("%s: %s", dataset, in_pool[dataset])
labels = (
    pd.concat(label_rows, ignore_index=True)
    if label_rows
    else pd.DataFrame(columns=["dataset", "assistant", "judge", "query_id", "doc_id", "human", "original", "rewritten"])
)
shift = label_shift(labels, alpha=alpha)
write_table(
    shift,
    out.label_shift,
    manifest=manifest,
    # counts, the labels per grade (original_<g>, rewritten_<g>) among them
    counts=["pairs", "unlabelled", "n", "queries", "up", "down", "same", "tests"]
    + [c for c in shift.columns if c.startswith(("original_", "rewritten_")) and c.rsplit("_", 1)[1].isdigit()],
    empty="no judge reads the texts",
    view=LABEL_SHIFT_VIEW,
    title=f"Experiment 1 (Figure 4): judges' labels of the balanced sample, original vs {provenance}",
)
figure4(labels, params.rewriting["per_grade"], out.figure4, out.figure4_pdf)
preference = rewrite_self_preference(
    labels, params.families, params.assistant_family, panel=params.panel, seed=params.seed
)
tested = int((preference["same_family"] & preference["reason"].isna()).sum())  # only these can be flagged
write_table(
    preference,
    out.self_preference,
    manifest=manifest,
    counts=["pairs", "queries"],
    empty="no judge reads the texts",
    view=PREFERENCE_VIEW,
    title=f"Self-preference on rewritten passages: each judge's label shift beyond its panel's (judges of "
    f"other families), {provenance}; flagged when the judge shares the assistant's family and the 95% CI "
    f"lies above 0: {tested} tests at one-sided alpha 0.025, chance alone would flag about "
    f"{tested * 0.025:.2f}",
)


# --- experiments 2 and 3: every system under every judge, original collection vs rewritten one
def per_query(prov: str, extra: dict) -> pd.DataFrame:
    frames = [
        primary_scores(pd.read_parquet(files[f"scores/{d}/{prov}"]), params.measure, params.judges[d])
        for d in params.datasets
    ]
    return pd.concat(frames, ignore_index=True).assign(**extra)


table = substitution(per_query("original", {}), per_query(provenance, {"assistant": assistant}), alpha=alpha)
table["substituted_passages"] = table["dataset"].map(lambda d: in_pool[d]["substituted_passages"])
table["in_pool_passages"] = table["dataset"].map(lambda d: in_pool[d]["in_pool_passages"])
write_table(
    table,
    out.substitution,
    manifest=manifest,
    counts=["queries", "queries_dropped", "tests", "substituted_passages", "in_pool_passages"],
    view=SUBSTITUTION_VIEW,
    title=f"Experiments 2-3: nDCG@10 on the original vs the {provenance} collection (paired t-test over queries)",
)

checks = pd.concat(check_rows, ignore_index=True)
flagged = checks[checks["flagged"] | checks["missing"]]
front = ["dataset", "assistant", "doc_id"]
flagged = flagged[front + [c for c in flagged.columns if c not in front]]
write_table(
    flagged,
    out.checks,
    manifest=manifest,
    empty="no rewrite was flagged",
    title=f"Flagged rewrites of {assistant} (empty, refusal, copy, length ratio, chat preamble; missing)",
)
log.info("%d flagged or missing rewrites", len(flagged))
