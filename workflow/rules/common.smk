# Configuration, wildcard constraints and every input function. Rule files hold rules only.
# Paths come from voirdire.layout.Layout, the one place the library reads them from too.
# Inputs and params that name judges or systems are dicts keyed by name, never parallel lists.
import dataclasses
import json
import re
import sys

from voirdire.config import as_plain, check, validate_schema
from voirdire.errors import InputError
from voirdire.layout import Layout
from voirdire.manifest import manifest, write_if_changed
from voirdire.preflight import preflight
from voirdire.probes.items import LISTS_PROMPT, PAIRWISE_PROMPT
from voirdire.systems import family_of
from voirdire.verdict import NO_SYSTEMS
from voirdire.wf import named

# command-line modes that read the workflow without running or planning jobs
NO_RUN = {
    "--lint",
    "--report",
    "--list",
    "--list-rules",
    "--dag",
    "--rulegraph",
    "--filegraph",
    "--summary",
    "--detailed-summary",
}

try:
    # the project's own schema check (not Snakemake's validate): every error one line, and the
    # schema's defaults filled into config; then the checks of meaning, every error at once
    validate_schema(config)
    PLAN = check(config, configfile=workflow.configfiles)
    # API keys matter to runs and dry runs, not to what reads the workflow without running it
    preflight(PLAN, keys=not NO_RUN.intersection(sys.argv))
except InputError as error:  # one line per error, naming the file:line or config key; no traceback
    sys.exit("\n".join(f"voirdire: {line}" for line in error.lines))

R = config["results"]
L = Layout(R)
# What the tables are made of; rewritten only when that changes, so the aggregate rules that
# take it as input rerun on any --rerun-triggers setting (jobs on cluster nodes only read it).
if workflow.is_main_process:
    write_if_changed(L.manifest(), manifest(PLAN))
# original, then rewritten-{assistant} for every assistant (docs/assistants.md)
PROVENANCES = PLAN.provenances
REWRITTEN = PROVENANCES[1:]
# wildcard patterns for rule inputs/outputs
D, P, J = "{dataset}", "{provenance}", "{judge}"


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    provenance="|".join(PROVENANCES),
    oracle=r"(perfect|swap(-\d+)+)(~r\d+)?",
    judge=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


def judges_of_kind(kind):
    """A wildcard regex matching exactly the configured judges of one kind."""
    return one_of(sorted({j.name for js in PLAN.judges.values() for j in js if j.kind == kind}))


def ranker_names():
    """A wildcard regex matching exactly the configured rankers' names."""
    return one_of(r.name for r in PLAN.rankers)


def llm_slots(endpoint):
    """A job's share of the workflow-wide cap on LLM calls in flight (`--resources llm_slots=N`).

    Snakemake lowers a job's value to the global cap when the cap is smaller; the job then
    keeps at most that many calls in flight (it reads its granted value back). A model the
    workflow serves itself has no provider's rate limit to respect: its callers take no slot
    (they run together with their server, and the group must fit the cap) and keep
    `concurrency` calls in flight. Nor has the local model, which runs inside the job's own
    process (`local/...`): its job keeps `concurrency` prompts waiting to be batched."""
    if endpoint is None or endpoint.serve is not None or endpoint.model.startswith("local/"):
        return 0
    return endpoint.concurrency


# ----------------------------------------------------------------------------- served models
# A judge or ranker with `serve:` is called at a model server the workflow starts itself (rule
# serve, workflow/rules/serve.smk): a Snakemake service job, run together with its callers as
# one group job and stopped when they are done. Snakemake starts a service group's jobs all at
# once, so callers that wait for another caller of the same server (a rewritten collection's
# judging copies the original's answers; a sample job its pool job's; a probe job the pool
# job's) are served by a later start of the server: layer 0 serves the original pool's
# judging and reranking, layer 1 what waits for layer 0, layer 2 what waits for layer 1.
def served_spec(owner):
    """How a judge's or ranker's model is served, or None (an API, a local model, no model)."""
    endpoint = getattr(owner, "endpoint", None)
    return endpoint.serve if endpoint is not None else None


SERVED = {
    spec.name: spec
    for owner in [j for js in PLAN.judges.values() for j in js] + PLAN.rankers
    if (spec := served_spec(owner)) is not None
}


def served_input(owner, layer):
    """A caller's `served` input: the server's record for its layer, if its model is served."""
    spec = served_spec(owner)
    return [] if spec is None else [L.served(spec.name, layer)]


def caller_threads(owner):
    """A caller's threads: its own, or 1 when it only sends requests to a served model."""
    return owner.threads if served_spec(owner) is None else 1


def served_records(wildcards):
    """Dataset -> served judge or ranker -> the summary carrying its server record (for the
    fingerprint)."""
    p = wildcards.provenance
    files = {}
    for d in PLAN.datasets:
        found = {
            j.name: L.judgments(d, p, j.name, "summary.json")
            for j in PLAN.judges[d]
            if served_spec(j)
        }
        found |= {r.name: L.bias(d, p, r.name) for r in PLAN.rankers if served_spec(r)}
        if found:
            files[d] = found
    return files


def rewrite_summaries(wildcards):
    """Dataset -> the assistant's rewrite summary (a rewritten-* provenance; none for original)."""
    p = wildcards.provenance
    return {} if p == "original" else {d: L.rewrites(d, p, "summary.json") for d in PLAN.datasets}


def position_bias_files(wildcards):
    """Position-bias figures of every PRP ranker, per dataset (a table beside Table 1). PRP
    rankers keep their original orderings in a rewritten collection (only the pointwise rankers
    of `rewriting.rankers` rerank it), so every provenance shows the original figures."""
    return [
        L.bias(dataset, "original", ranker.name)
        for dataset in PLAN.datasets
        for ranker in PLAN.rankers
        if ranker.method == "prp"
    ]


def recorded_run_files(wildcards):
    """System name -> the recorded run file of the dataset (runs:)."""
    return {f"run_{s.slug}": str(s.file(wildcards.dataset)) for s in PLAN.recorded}


def recorded_params(wildcards):
    """System name -> its file, output name and unknown_queries setting, for the dataset."""
    return {
        s.name: {"input": f"run_{s.slug}", "output": s.slug, "unknown_queries": s.unknown_queries}
        for s in PLAN.recorded
    }


def pairs_inputs(wildcards):
    """What the needed pairs are drawn from: the BM25 pool (a dataset with texts) and every
    recorded run's top depth (the oracles and rankers reorder one of these)."""
    inputs = {"qrels": L.human_qrels(wildcards.dataset)}
    if not PLAN.labels_only(wildcards.dataset):
        inputs["pool"] = L.pool(wildcards.dataset)
    if PLAN.recorded:
        inputs["recorded"] = [L.run(wildcards.dataset, "original", s.slug) for s in PLAN.recorded]
    return inputs


def oracle_base(wildcards):
    """The run the oracles reorder: the BM25 pool, or a recorded run (oracles.base)."""
    return L.run(wildcards.dataset, "original", PLAN.base.slug)


def dataset_spec(wildcards):
    return as_plain(config["datasets"][wildcards.dataset])


def dataset_files(wildcards):
    """The dataset's own input files, so that editing one reruns what depends on it."""
    spec = config["datasets"][wildcards.dataset]
    return {key: spec[key] for key in ("topics", "qrels", "candidates") if key in spec}


def bm25_inputs(wildcards):
    spec = config["datasets"][wildcards.dataset]
    inputs = {"topics": L.topics(wildcards.dataset)}
    # the texts of the passages recorded runs retrieved outside the pool, for judges that read
    inputs["recorded"] = [L.run(wildcards.dataset, "original", s.slug) for s in PLAN.recorded]
    if spec["source"] == "rankgpt":
        inputs["candidates"] = spec["candidates"]
    elif "prebuilt" not in spec.get("index", {}):
        inputs["index"] = L.index_marker(wildcards.dataset)
    return inputs


def judge_summaries(wildcards):
    """Judge name -> summary of each LLM judge (calls, unparsed, cost) and recorded judge (labels
    outside the pool, coverage) of the dataset, for Table 2."""
    return {
        judge.name: L.judgments(wildcards.dataset, wildcards.provenance, judge.name, "summary.json")
        for judge in PLAN.judges[wildcards.dataset]
        if judge.kind in ("llm", "recorded")
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
    """Judge name -> scale, for every judge of the dataset (human first)."""
    return {
        judge: judge_scale(wildcards.dataset, judge)
        for judge in PLAN.judge_names(wildcards.dataset)
    }


def system_runs_of(dataset, provenance):
    """System (as tables print it) -> its run files (several: an oracle's random tie-break draws)."""
    return {
        str(system): [L.run(dataset, provenance, name) for name in PLAN.run_names(system)]
        for system in PLAN.systems
    }


def system_runs(wildcards):
    return system_runs_of(wildcards.dataset, wildcards.provenance)


def judge_qrels(wildcards):
    """Judge name -> its qrels, for every judge of the dataset."""
    return {
        judge: L.qrels(wildcards.dataset, wildcards.provenance, judge)
        for judge in PLAN.judge_names(wildcards.dataset)
    }


def judge_measures(wildcards):
    """Judge name -> per-query scores of every system under it, every measure (none without
    systems: the label sets are audited alone)."""
    if not PLAN.has_systems:
        return {}
    return {
        judge: L.eval_measures(wildcards.dataset, wildcards.provenance, judge)
        for judge in PLAN.judge_names(wildcards.dataset)
    }


def judge_evals(wildcards):
    """Judge name -> per-query scores of every system under it, for every judge of the dataset
    (none without systems)."""
    if not PLAN.has_systems:
        return {}
    return {
        judge: L.eval(wildcards.dataset, wildcards.provenance, judge)
        for judge in PLAN.judge_names(wildcards.dataset)
    }


def named_inputs(**functions):
    """A rule's name-keyed inputs from input functions that return nested structures
    (name -> file, or name -> list of files): each file declared once (voirdire.wf.named); the
    script reads them back with voirdire.wf.grouped(snakemake.input)."""

    def inputs(wildcards):
        return named(**{group: function(wildcards) for group, function in functions.items()})

    return inputs


def paths(named):
    """The files of a name-keyed input function, as a rule's input list."""

    def inputs(wildcards):
        found = named(wildcards)
        return [p for v in found.values() for p in (v if isinstance(v, list) else [v])]

    return inputs


def all_judge_evals(wildcards):
    if not PLAN.has_systems:
        return []
    return [
        L.eval(dataset, wildcards.provenance, judge)
        for dataset in PLAN.datasets
        for judge in PLAN.judge_names(dataset)
    ]


def all_judge_measures(wildcards):
    if not PLAN.has_systems:
        return []
    return [
        L.eval_measures(dataset, wildcards.provenance, judge)
        for dataset in PLAN.datasets
        for judge in PLAN.judge_names(dataset)
    ]


def all_datasets(pattern):
    def inputs(wildcards):
        return expand(pattern, dataset=PLAN.datasets, provenance=wildcards.provenance)

    return inputs


def audit_output(name, ext, caption=None):
    """An audit table or figure; with a caption, it joins the report under Audits."""
    path = L.audit(P, name, ext)
    if not caption:
        return path
    return report(path, caption=f"../report/audit_{caption}.rst", category="Audits")


def audit_judges(wildcards):
    """Dataset -> judge -> scale, kind and family, for every judge of every dataset."""
    return {
        dataset: {
            judge.name: {
                **judge_scale(dataset, judge.name),
                "kind": judge.kind,
                "family": judge.family,
            }
            for judge in PLAN.judges[dataset]
        }
        for dataset in PLAN.datasets
    }


def audit_qrels(wildcards):
    """Dataset -> judge -> qrels file, for every judge of every dataset."""
    return {
        dataset: {
            judge: L.qrels(dataset, wildcards.provenance, judge)
            for judge in PLAN.judge_names(dataset)
        }
        for dataset in PLAN.datasets
    }


def audit_drift_sources(wildcards):
    """Dataset -> judge -> its extra label sets: a recorded judge's reruns, or an LLM judge's
    raw answers (label sets by sample when samples >= 2, else by the provider's model version)."""
    sources = {}
    for dataset in PLAN.datasets:
        for judge in PLAN.judges[dataset]:
            if judge.kind == "recorded" and judge.reruns:
                sources.setdefault(dataset, {})[judge.name] = {
                    "reruns": [str(p) for p in judge.reruns]
                }
            elif judge.kind == "llm":
                raw = L.judgments(dataset, wildcards.provenance, judge.name, "parquet")
                sources.setdefault(dataset, {})[judge.name] = {"raw": raw}
    return sources


def audit_runs(wildcards):
    """Dataset -> system -> run files, and dataset -> topics, for re-evaluating drifted labels."""
    return {dataset: system_runs_of(dataset, wildcards.provenance) for dataset in PLAN.datasets}


def audit_inputs(wildcards):
    """Every file the audits read, name-keyed and declared once (voirdire.wf.named): each
    judge's qrels, the needed pairs, topics, the systems' runs, the oracles' base run (none
    without systems), the texts (not of a labels-only dataset) and a rewritten provenance's
    rewrites, and the drift audit's extra label sets."""
    p = wildcards.provenance
    texts = [d for d in PLAN.datasets if not PLAN.labels_only(d)]
    base = PLAN.datasets if PLAN.has_systems else []
    return named(
        qrels=audit_qrels(wildcards),
        pairs={d: L.pairs(d, p) for d in PLAN.datasets},
        topics={d: L.topics(d) for d in PLAN.datasets},
        runs=audit_runs(wildcards),
        base={d: L.run(d, "original", PLAN.base.slug) for d in base},
        passages={d: L.passages(d) for d in texts},
        rewrites={} if p == "original" else {d: L.rewrites(d, p) for d in texts},
        drift=audit_drift_sources(wildcards),
    )


def one_of(names):
    """A wildcard regex matching exactly these names."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def assistant_of(provenance):
    return PLAN.assistant(provenance.removeprefix("rewritten-"))


def texts_inputs(wildcards):
    """The texts of the pool in the job's provenance: the pool's passages, and an assistant's
    rewrites (substituted wherever the passage appears) for rewritten-* provenances."""
    inputs = {"passages": [L.passages(wildcards.dataset)]}
    if wildcards.provenance != "original":
        inputs["rewrites"] = L.rewrites(wildcards.dataset, wildcards.provenance)
    return inputs


def sample_texts_inputs(wildcards):
    """The texts of the pool and of the sample, in the job's provenance."""
    inputs = texts_inputs(wildcards)
    inputs["passages"] = inputs["passages"] + [L.sample_passages(wildcards.dataset)]
    return inputs


def judge_seeds(wildcards):
    """Finished stores an LLM judging job copies answers from (same request, same answer):
    a rewritten-* job reads the original job's, a sample job its provenance's pool job's too.
    Name -> the qrels that mark the store finished (inputs), and the stores (params)."""
    d, p, j = wildcards.dataset, wildcards.provenance, wildcards.judge
    seeds = {}
    if p != "original":
        seeds[L.store(d, "original", j)] = L.qrels(d, "original", j)
    return seeds


def sample_judge_seeds(wildcards):
    d, p, j = wildcards.dataset, wildcards.provenance, wildcards.judge
    seeds = {L.store(d, p, j): L.qrels(d, p, j)}
    if p != "original":
        seeds[L.sample_labels(d, "original", j, "sqlite")] = L.sample_labels(d, "original", j)
    return seeds


def fixed_order_systems():
    """Run names whose ordering does not read the texts in a rewritten collection: BM25 (the pool
    is retrieved once, on the original collection), the oracles (they sort by human labels) and
    every ranker not in rewriting.rankers."""
    moving = {r.name for r in PLAN.rewriting_rankers}
    return one_of(name for s in PLAN.systems if s.slug not in moving for name in PLAN.run_names(s))


def sample_judges(dataset):
    """The judges that read the texts, so label the sample in each provenance (Figure 4)."""
    return [j.name for j in PLAN.judges[dataset] if j.kind in ("llm", "embedding", "baseline")]


def assistant_inputs(wildcards):
    """Everything the assistants tables of one rewritten provenance read."""
    p = wildcards.provenance
    files = {}
    for d in PLAN.datasets:
        files[f"sample/{d}"] = L.sample(d)
        files[f"rewrites/{d}"] = L.rewrites(d, p)
        for j in sample_judges(d):
            for prov in ("original", p):
                files[f"labels/{d}/{prov}/{j}"] = L.sample_labels(d, prov, j)
        for j in PLAN.judge_names(d):
            for prov in ("original", p):
                files[f"eval/{d}/{prov}/{j}"] = L.eval(d, prov, j)
        files[f"pool/{d}"] = L.pool(d)
    return files


def score_inputs(wildcards):
    p = wildcards.provenance
    return named(
        scores={
            d: {r.name: L.sample_scores(d, p, r.name) for r in PLAN.rewriting_rankers}
            for d in PLAN.datasets
        }
    )


# ----------------------------------------------------------------------------- probes
PROBES = as_plain(config.get("probes") or {})
HUMAN_SCALE = PLAN.judge(PLAN.datasets[0], "human").scale


def probe_judge_inputs(wildcards):
    """A probe job's optional inputs: the personas (persona probe) and LLM padders' texts."""
    inputs = {}
    if "personas" in PROBES:
        inputs["personas"] = L.personas(wildcards.dataset)
    if PLAN.padders:
        inputs["padded"] = [L.padded(wildcards.dataset, p.name) for p in PLAN.padders]
    return inputs


def probe_templates(wildcards=None):
    """The probes' template files, so that editing one reruns the probe jobs."""
    swap = PROBES.get("swap") or {}
    files = [swap.get("prompt_file", str(PAIRWISE_PROMPT))] if swap or "pad" in PROBES else []
    if swap.get("lists"):
        files.append(swap["lists"].get("prompt_file", str(LISTS_PROMPT)))
    return files


def probe_answers(wildcards=None):
    """(dataset, judge) -> the judge's probe answers, for every probed judge of every dataset."""
    return {(d, j): L.probe_answers(d, j) for d in PLAN.datasets for j in PLAN.probe_judges}


def probe_answer_tree(wildcards=None):
    """Dataset -> probed judge -> its probe answers."""
    return {d: {j: L.probe_answers(d, j) for j in PLAN.probe_judges} for d in PLAN.datasets}


def probe_summary_tree(wildcards=None):
    """Dataset -> who answered the probes (each probed judge, each LLM padder) -> its summary."""
    return {
        d: {j: L.probe_answers(d, j, "summary.json") for j in PLAN.probe_judges}
        | {f"padder-{p.name}": L.padded(d, p.name, "summary.json") for p in PLAN.padders}
        for d in PLAN.datasets
    }


def human_qrels_of(wildcards=None):
    return {d: L.human_qrels(d) for d in PLAN.datasets}


def human_scores_of(wildcards=None):
    return {d: L.eval(d, "original", "human") for d in PLAN.datasets}


def original_runs(wildcards=None):
    """Dataset -> system -> its run files of the original collection."""
    return {d: system_runs_of(d, "original") for d in PLAN.datasets}


def variant_label_tree(wildcards=None):
    """Dataset -> variants group -> judge -> its qrels (pool, original)."""
    tree = {}
    for (d, group, judge), path in variant_labels().items():
        tree.setdefault(d, {}).setdefault(group, {})[judge] = path
    return tree


def probe_answer_files(wildcards):
    return list(probe_answers().values())


def probe_output(name, ext, caption=None):
    """A probe's table or figure (provenance original); with a caption it joins the report under Probes."""
    path = L.audit("original", name, ext)
    if not caption:
        return path
    return report(path, caption=f"../report/probe_{caption}.rst", category="Probes")


def probe_table_outputs():
    """The outputs of every configured probe: ``{probe}`` (csv), ``{probe}_md``, ``{probe}_png``,
    ``{probe}_pdf``, and the persona tables and figures (``persona_*``)."""
    outputs = {}
    for name in ("swap", "pad", "injection"):
        if name in PROBES:
            outputs[name] = probe_output(name, "csv", name)
            outputs[f"{name}_md"] = probe_output(name, "md")
            outputs[f"{name}_png"] = probe_output(name, "png", f"{name}_chart")
            outputs[f"{name}_pdf"] = probe_output(name, "pdf")
    if "personas" in PROBES:
        outputs.update({f"persona_{k}": v for k, v in sensitivity_outputs("persona").items()})
    outputs["fingerprint"] = report(
        L.audit("original", "probes_fingerprint", "json"),
        caption="../report/fingerprint.rst",
        category="Probes",
    )
    return outputs


def sensitivity_outputs(prefix):
    """The persona (or prompt-variant) tables and figures: agreement, displacement, sensitivity by
    condition and by system, direction consistency; the displacement heatmap and sensitivity chart.
    """
    outputs = {}
    for name in ("agreement", "displacement", "sensitivity", "systems", "consistency"):
        outputs[name] = probe_output(f"{prefix}_{name}", "csv", f"sensitivity_{name}")
        outputs[f"{name}_md"] = probe_output(f"{prefix}_{name}", "md")
    outputs["heatmap"] = probe_output(f"{prefix}_heatmap", "png", "sensitivity_heatmap")
    outputs["chart"] = probe_output(f"{prefix}_chart", "png", "sensitivity_chart")
    return outputs


def variant_labels():
    """(dataset, group, judge) -> qrels of every judge of every variants group (pool, original)."""
    return {
        (d, group, judge): L.qrels(d, "original", judge)
        for group, entry in config.get("variants", {}).items()
        for judge in [entry["baseline"], *entry["variants"]]
        for d in PLAN.datasets
    }


def probe_final_outputs():
    names = []
    if PLAN.probe_judges:
        names += (
            ["swap"] * ("swap" in PROBES)
            + ["pad"] * ("pad" in PROBES)
            + ["injection"] * ("injection" in PROBES)
        )
        if "personas" in PROBES:
            names.append("persona_sensitivity")
    if config.get("variants"):
        names.append("prompt_sensitivity_sensitivity")
    return [L.audit("original", name, "csv") for name in names]


# ----------------------------------------------------------------------------- the gamed system
GAMING = as_plain(config.get("gaming") or {})


def gaming_judges_of_kind(kind):
    """A wildcard regex matching exactly the judges of one kind the gamed systems are put to."""
    return one_of(
        sorted(
            name for name in PLAN.gaming_judges if PLAN.judge(PLAN.datasets[0], name).kind == kind
        )
    )


def gaming_systems(dataset):
    """Gamed system (as tables print it) -> its run files of the original collection."""
    runs = system_runs_of(dataset, "original")
    return {name: runs[name] for name in GAMING.get("systems", [])}


def gaming_run_inputs(wildcards):
    """The gamed systems' runs, name-keyed (the script reads them back with grouped)."""
    return named(runs=gaming_systems(wildcards.dataset))


def gaming_label_tree(wildcards=None):
    """Dataset -> judge -> its labels of the modified passages."""
    return {d: {j: L.gaming_labels(d, j) for j in PLAN.gaming_judges} for d in PLAN.datasets}


def gaming_qrels_tree(wildcards=None):
    """Dataset -> judge -> its labels of the pool (original texts)."""
    return {d: {j: L.qrels(d, "original", j) for j in PLAN.gaming_judges} for d in PLAN.datasets}


def gaming_score_tree(wildcards=None):
    """Dataset -> judge (and human) -> every system's per-query scores, as Table 1 has them."""
    return {
        d: {j: L.eval(d, "original", j) for j in ["human", *PLAN.gaming_judges]}
        for d in PLAN.datasets
    }


def gaming_final_outputs():
    return [L.audit("original", "gaming", "csv")] if PLAN.gaming_judges else []


def verdict_inputs(wildcards):
    """Every table a verdict question reads (voirdire.verdict.QUESTIONS), of the original texts:
    the paper's tables, the label audits, and the probes that are configured."""
    tables = {
        name: L.table("original", name, "csv") for name in ("table1", "table2", "significance")
    }
    tables |= {
        name: L.audit("original", name, "csv")
        for name in ("label_test", "self_preference", "length", "control_chart", "circularity")
    }
    probes = set(PROBES) if PLAN.probe_judges else set()
    tables |= {
        name: L.audit("original", name, "csv")
        for name in ("swap", "pad", "injection")
        if name in probes
    }
    if "personas" in probes:
        tables["persona_sensitivity"] = L.audit("original", "persona_sensitivity", "csv")
    tables |= {"gaming": path for path in gaming_final_outputs()}
    if PLAN.has_systems:  # the landing page shows Figure 3 under the verdict
        tables["figure3"] = L.figure("original", "figure3", "png")
    return tables


def unavailable(dataset):
    """What the verdict's questions may need and this dataset lacks -> the reason (voirdire.verdict):
    systems (no systems: listed: the label sets are audited alone), passage texts (a labels-only
    dataset)."""
    missing = {}
    if not PLAN.has_systems:
        missing["runs"] = NO_SYSTEMS
    if PLAN.labels_only(dataset):
        missing["texts"] = "no passage texts (a labels-only dataset)"
    return missing


def get_final_output():
    """Every table and figure, the verdict, then the table of where the run's time went (made last)."""
    return run_outputs() + verdict_outputs() + [L.timings("csv")]


def verdict_outputs():
    return [L.verdict(ext) for ext in ("csv", "md", "html")]


def run_outputs():
    names = ["table1", "table2", "significance"]
    if any(r.method == "prp" for r in PLAN.rankers):
        names.append("position_bias")
    tables = [L.table(P, name, ext) for name in names for ext in ("csv", "md")]
    # Figure 3 draws the systems under each judge: none without systems (Table 1 says why)
    figures = [L.figure(P, "figure3", ext) for ext in ("png", "pdf")] if PLAN.has_systems else []
    audits = [L.audit(P, name, "csv") for name in AUDIT_TABLES]
    audits += [L.audit(P, name, "png") for name in AUDIT_FIGURES]
    outputs = expand(
        tables + figures + audits + [L.table(P, "fingerprint", "json")],
        provenance=PROVENANCES,
    )
    assistants = [
        L.table(P, name, "csv") for name in ("label_shift", "substitution", "rewrite_checks")
    ]
    assistants += [L.figure(P, "figure4", "png")]
    if PLAN.rewriting_rankers:
        assistants += [L.table(P, "score_shift", "csv"), L.figure(P, "figure5", "png")]
    return (
        outputs
        + expand(assistants, provenance=REWRITTEN)
        + probe_final_outputs()
        + gaming_final_outputs()
    )


AUDIT_TABLES = (
    "label_test",
    "lojo",
    "lojo_labels",
    "self_preference",
    "length",
    "length_systems",
    "drift",
    "control_chart",
    "circularity",
    "calibration",
)
AUDIT_FIGURES = ("confusion", "leniency", "lojo", "length", "drift", "circularity", "calibration")
