# Configuration, wildcard constraints and every input function. Rule files hold rules only.
import re

from snakemake.utils import validate

from voirdire.config import as_plain, check
from voirdire.preflight import preflight


validate(config, schema="../../config/schema.yaml")
PLAN = check(config)
preflight(PLAN)

R = config["results"]
PROVENANCES = ["original"]


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    provenance="|".join(PROVENANCES),
    oracle=r"(perfect|swap(-\d+)+)(~r\d+)?",
    judge=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


def judges_of_kind(kind):
    """A wildcard regex matching exactly the configured judges of one kind."""
    names = sorted({j.name for js in PLAN.judges.values() for j in js if j.kind == kind})
    return "|".join(re.escape(name) for name in names) or "(?!)"


def ranker_names():
    """A wildcard regex matching exactly the configured rankers' names."""
    return "|".join(re.escape(r.name) for r in PLAN.rankers) or "(?!)"


def position_bias_files(wildcards):
    """Position-bias figures of every PRP ranker, per dataset (a table beside Table 1)."""
    return [
        f"{R}/{dataset}/runs/{wildcards.provenance}/{ranker.name}.bias.json"
        for dataset in PLAN.datasets
        for ranker in PLAN.rankers
        if ranker.method == "prp"
    ]


def dataset_spec(wildcards):
    return as_plain(config["datasets"][wildcards.dataset])


def dataset_files(wildcards):
    """The dataset's own input files, so that editing one reruns what depends on it."""
    spec = config["datasets"][wildcards.dataset]
    return {key: spec[key] for key in ("topics", "qrels", "candidates") if key in spec}


def bm25_inputs(wildcards):
    spec = config["datasets"][wildcards.dataset]
    inputs = {"topics": f"{R}/{wildcards.dataset}/data/topics.tsv"}
    if spec["source"] == "rankgpt":
        inputs["candidates"] = spec["candidates"]
    elif "prebuilt" not in spec.get("index", {}):
        inputs["index"] = f"{R}/{wildcards.dataset}/index"
    return inputs


def store_path(wildcards):
    """One judgment store per judging job (dataset x judge x provenance): SPEC section 3."""
    return f"{R}/{wildcards.dataset}/judgments/{wildcards.provenance}/{wildcards.judge}.sqlite"


def judge_summaries(wildcards):
    """Summaries of the dataset's LLM judges (calls, unparsed answers, cost) for Table 2."""
    return {
        judge.name: f"{R}/{wildcards.dataset}/judgments/{wildcards.provenance}/{judge.name}.summary.json"
        for judge in PLAN.judges[wildcards.dataset]
        if judge.kind == "llm"
    }


def recorded_qrels(wildcards):
    return str(PLAN.judge(wildcards.dataset, wildcards.judge).qrels)


def judge_scale(dataset, name):
    judge = PLAN.judge(dataset, name)
    return {
        "min": judge.scale.low,
        "max": judge.scale.high,
        "binary_threshold": judge.scale.binary_threshold,
    }


def judge_params(wildcards):
    return judge_scale(wildcards.dataset, wildcards.judge)


def judges_meta(wildcards):
    """Scale of every judge of the dataset, in PLAN.judge_names order (human first)."""
    return {
        judge: judge_scale(wildcards.dataset, judge)
        for judge in PLAN.judge_names(wildcards.dataset)
    }


def system_runs(wildcards):
    """Every run file of every configured system, for one dataset and provenance."""
    return [
        f"{R}/{wildcards.dataset}/runs/{wildcards.provenance}/{name}.run"
        for system in PLAN.systems
        for name in PLAN.run_names(system)
    ]


def system_run_names(wildcards):
    """The system (as tables print it) of each file of system_runs, in the same order."""
    return [str(system) for system in PLAN.systems for _ in PLAN.run_names(system)]


def judge_qrels_files(wildcards):
    """Qrels of every judge of the dataset, in PLAN.judge_names order."""
    return [
        f"{R}/{wildcards.dataset}/qrels/{wildcards.provenance}/{judge}.txt"
        for judge in PLAN.judge_names(wildcards.dataset)
    ]


def eval_paths(dataset, provenance):
    return [
        f"{R}/{dataset}/eval/{provenance}/{judge}.parquet"
        for judge in PLAN.judge_names(dataset)
    ]


def judge_evals(wildcards):
    """Per-query scores under every judge of the dataset, in PLAN.judge_names order."""
    return eval_paths(wildcards.dataset, wildcards.provenance)


def all_judge_evals(wildcards):
    return [
        path
        for dataset in PLAN.datasets
        for path in eval_paths(dataset, wildcards.provenance)
    ]


def all_datasets(pattern):
    def inputs(wildcards):
        return expand(pattern, dataset=PLAN.datasets, provenance=wildcards.provenance)

    return inputs


def get_final_output():
    names = ["table1", "table2", "significance"]
    if any(r.method == "prp" for r in PLAN.rankers):
        names.append("position_bias")
    tables = [
        f"{R}/tables/{{provenance}}/{name}.{ext}"
        for name in names
        for ext in ("csv", "md")
    ]
    figures = [f"{R}/figures/{{provenance}}/figure3.{ext}" for ext in ("png", "pdf")]
    return expand(
        tables + figures + [f"{R}/tables/{{provenance}}/fingerprint.json"],
        provenance=PROVENANCES,
    )
