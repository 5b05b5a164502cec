"""Probes, step 5: the tables and figures of one probe (the rule's name says which): the swap
test, the pad test, the injection probe, persona-conditioned judging, and prompt sensitivity."""

import pandas as pd

from voirdire.evaluation import evaluate_systems
from voirdire.formats import read_qrels, read_run
from voirdire.manifest import sha256
from voirdire.probes import report as probes
from voirdire.probes.sensitivity import displacement_heatmap, sensitivity_chart
from voirdire.probes.shifts import shift_chart, swap_chart
from voirdire.report import write_table
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
params, out, rule = snakemake.params, snakemake.output, snakemake.rule  # noqa: F821
manifest = sha256(snakemake.input.manifest)  # noqa: F821


def qrels(path: str, dataset: str) -> pd.DataFrame:
    return read_qrels(path, (-1000, 1000), allow_empty=True).assign(dataset=dataset)


def answers() -> pd.DataFrame:
    frames = [pd.read_parquet(path).assign(dataset=d, judge=j) for (d, j), path in params.answers.items()]
    return pd.concat(frames, ignore_index=True)


def table(frame: pd.DataFrame, name: str, title: str) -> None:
    write_table(frame, getattr(out, name).removesuffix(".csv"), title=title, floatfmt=".3f", manifest=manifest,
                empty="no LLM judge is probed")  # fmt: skip


human = pd.concat([qrels(path, d) for d, path in params.human.items()], ignore_index=True)
if rule == "swap_table":
    scores = pd.concat([pd.read_parquet(p) for p in params.human_scores.values()], ignore_index=True)
    result = probes.swap_results(answers(), human, scores)
    table(result, "table", "Swap test: each pair asked in both orders; a win counts only if it survives the swap")
    swap_chart(result, out.png)
elif rule == "pad_table":
    result = probes.pad_results(answers(), human, params.alpha)
    table(result, "table", "Pad test: padded (about twice the length, no new facts) vs original text")
    shift_chart(result.rename(columns={"padding": "condition"}), out.png, "Pad test")
elif rule == "injection_table":
    result = probes.injection_results(answers(), human, params.alpha)
    table(result, "table", "Injection probe: a relevance claim or the query's terms added to non-relevant passages")
    shift_chart(result.rename(columns={"template": "condition"}), out.png, "Injection probe")
else:
    if rule == "persona_tables":  # the roles' labels of the sampled pairs, from the probe jobs
        labels = probes.persona_labels(answers())
        baselines = {g: "baseline" for g in labels["group"].unique()}
        pairs = labels[["dataset", "query_id", "doc_id"]].drop_duplicates()
        human = human.merge(pairs, on=["dataset", "query_id", "doc_id"])  # the same pairs for the humans
    else:  # prompt_sensitivity: each variants group's judges' labels of the pool
        labels = pd.concat([qrels(path, d).assign(group=g, condition=j) for (d, g, j), path in params.labels.items()],
                           ignore_index=True)  # fmt: skip
        baselines = params.baselines
    runs = {d: {s: [read_run(p) for p in paths] for s, paths in systems.items()} for d, systems in params.runs.items()}
    queries = {d: sorted(set(labels.loc[labels["dataset"] == d, "query_id"])) for d in runs}
    per_query = pd.concat([
        evaluate_systems(runs[d], part.dropna(subset=["relevance"]).astype({"relevance": int}), queries[d]).assign(dataset=d, group=g, condition=c)
        for (d, g, c), part in labels.groupby(["dataset", "group", "condition"])
    ], ignore_index=True)  # fmt: skip
    human_scores = pd.concat([
        evaluate_systems(runs[d], human[human["dataset"] == d], queries[d]).assign(dataset=d) for d in runs
    ], ignore_index=True)  # fmt: skip
    tables = probes.sensitivity_tables(labels, human, baselines, per_query, human_scores, low=params.low,
                                       high=params.high, seed=params.seed, rbo_p=params.rbo_p)  # fmt: skip
    what = "Persona-conditioned judging" if rule == "persona_tables" else "Prompt sensitivity"
    for name, frame in tables.items():
        table(frame, name, f"{what}: {name}")
    displacement_heatmap(tables["displacement"], out.heatmap)
    sensitivity_chart(tables["sensitivity"], out.chart)
log.info("%s written", rule)
