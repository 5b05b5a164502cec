"""The workflow's input functions: which files (and values) each rule reads, from the plan, the
layout and the config. `workflow/rules/common.smk` makes one `INPUTS = Inputs(PLAN, L, config)`;
the rule files call its methods. Nothing here imports Snakemake: a method that takes `wildcards`
reads only their attributes (a `types.SimpleNamespace` stands in for them in the tests).

Inputs and params that name judges or systems are dicts keyed by name, never parallel lists."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .audits.declared import tables as audit_tables
from .config import as_plain
from .jobscript import named
from .layout import Layout
from .probes.items import LISTS_PROMPT, PAIRWISE_PROMPT
from .verdict import NO_SYSTEMS, QUESTIONS


def one_of(names: Iterable[str]) -> str:
    """A wildcard regex matching exactly these names."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


def llm_slots(endpoint) -> int:
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


def served_spec(owner):
    """How a judge's or ranker's model is served, or None (an API, a local model, no model)."""
    endpoint = getattr(owner, "endpoint", None)
    return endpoint.serve if endpoint is not None else None


def caller_threads(owner) -> int:
    """A caller's threads: its own, or 1 when it only sends requests to a served model."""
    return owner.threads if served_spec(owner) is None else 1


def named_inputs(**functions: Callable) -> Callable:
    """A rule's name-keyed inputs from input functions that return nested structures
    (name -> file, or name -> list of files): each file declared once (voirdire.jobscript.named); the
    script reads them back with voirdire.jobscript.grouped(snakemake.input)."""

    def inputs(wildcards):
        return named(**{group: function(wildcards) for group, function in functions.items()})

    return inputs


class Inputs:
    """Every input function of the workflow, on one plan, layout and (validated) config."""

    def __init__(self, plan, layout: Layout, config: dict[str, Any]):
        self.plan = plan
        self.layout = layout
        self.config = config
        # the probes' and the gamed system's sections as the check resolved them (plain dicts)
        self.probes = as_plain(plan.probes or {})
        self.gaming = as_plain(plan.gaming or {})
        self.human_scale = plan.judge(plan.datasets[0], "human").scale

    # ------------------------------------------------------------------------- wildcard regexes
    def judges_of_kind(self, kind: str) -> str:
        """A wildcard regex matching exactly the configured judges of one kind."""
        return one_of(sorted({j.name for js in self.plan.judges.values() for j in js if j.kind == kind}))

    def ranker_names(self) -> str:
        """A wildcard regex matching exactly the configured rankers' names."""
        return one_of(r.name for r in self.plan.rankers)

    def fixed_order_systems(self) -> str:
        """Run names whose ordering does not read the texts in a rewritten collection: BM25 (the
        pool is retrieved once, on the original collection), the oracles (they sort by human
        labels) and every ranker not in rewriting.rankers."""
        plan = self.plan
        moving = {r.name for r in plan.rewriting_rankers}
        return one_of(name for s in plan.systems if s.slug not in moving for name in plan.run_names(s))

    def gaming_judges_of_kind(self, kind: str) -> str:
        """A wildcard regex matching exactly the judges of one kind the gamed systems are put to."""
        plan = self.plan
        return one_of(sorted(name for name in plan.gaming_judges if plan.judge(plan.datasets[0], name).kind == kind))

    # ------------------------------------------------------------------------- served models
    # A judge or ranker with `serve:` is called at a model server the workflow starts itself (rule
    # serve, workflow/rules/serve.smk): a Snakemake service job, run together with its callers as
    # one group job and stopped when they are done. Snakemake starts a service group's jobs all
    # at once, so callers that wait for another caller of the same server (a rewritten
    # collection's judging copies the original's answers; a sample job its pool job's; a probe
    # job the pool job's) are served by a later start of the server: layer 0 serves the original
    # pool's judging and reranking, layer 1 what waits for layer 0, layer 2 what waits for layer 1.
    @property
    def served(self) -> dict:
        """Server name -> its spec, for every served judge and ranker."""
        plan = self.plan
        return {
            spec.name: spec
            for owner in [j for js in plan.judges.values() for j in js] + plan.rankers
            if (spec := served_spec(owner)) is not None
        }

    def served_input(self, owner, layer) -> list[str]:
        """A caller's `served` input: the server's record for its layer, if its model is served."""
        spec = served_spec(owner)
        return [] if spec is None else [self.layout.served(spec.name, layer)]

    def served_records(self, wildcards) -> dict:
        """Dataset -> served judge or ranker -> the summary carrying its server record (for the
        fingerprint)."""
        plan, L, p = self.plan, self.layout, wildcards.provenance
        files = {}
        for d in plan.datasets:
            found = {j.name: L.judgments(d, p, j.name, "summary.json") for j in plan.judges[d] if served_spec(j)}
            found |= {r.name: L.bias(d, p, r.name) for r in plan.rankers if served_spec(r)}
            if found:
                files[d] = found
        return files

    # ------------------------------------------------------------------------- data, runs, BM25
    def dataset_spec(self, wildcards) -> dict:
        return as_plain(self.config["datasets"][wildcards.dataset])

    def dataset_files(self, wildcards) -> dict:
        """The dataset's own input files, so that editing one reruns what depends on it."""
        spec = self.config["datasets"][wildcards.dataset]
        return {key: spec[key] for key in ("topics", "qrels", "candidates") if key in spec}

    def bm25_inputs(self, wildcards) -> dict:
        plan, L = self.plan, self.layout
        spec = self.config["datasets"][wildcards.dataset]
        inputs = {"topics": L.topics(wildcards.dataset)}
        # the texts of the passages recorded runs retrieved outside the pool, for judges that read
        inputs["recorded"] = [L.run(wildcards.dataset, "original", s.slug) for s in plan.recorded]
        if spec["source"] == "rankgpt":
            inputs["candidates"] = spec["candidates"]
        elif "prebuilt" not in spec.get("index", {}):
            inputs["index"] = L.index_marker(wildcards.dataset)
        return inputs

    def sample_text_inputs(self, wildcards) -> dict:
        """Where the assistants' sample finds passage texts the pool lacks: a local dataset's
        corpus file (read as it is: no index, no Java), a RankGPT file's candidates, or the
        index the workflow built (none for a prebuilt one)."""
        spec = self.config["datasets"][wildcards.dataset]
        if spec["source"] == "local":
            return {"corpus": spec["corpus"]}
        if spec["source"] == "rankgpt":
            return {"candidates": spec["candidates"]}
        if "prebuilt" not in spec.get("index", {}):
            return {"index": self.layout.index_marker(wildcards.dataset)}
        return {}

    def recorded_run_files(self, wildcards) -> dict:
        """System name -> the recorded run file of the dataset (runs:)."""
        return {f"run_{s.slug}": str(s.file(wildcards.dataset)) for s in self.plan.recorded}

    def recorded_params(self, wildcards) -> dict:
        """System name -> its file, output name and unknown_queries setting, for the dataset."""
        return {
            s.name: {
                "input": f"run_{s.slug}",
                "output": s.slug,
                "unknown_queries": s.unknown_queries,
            }
            for s in self.plan.recorded
        }

    def oracle_base(self, wildcards) -> str:
        """The run the oracles reorder: the BM25 pool, or a recorded run (oracles.base)."""
        return self.layout.run(wildcards.dataset, "original", self.plan.base.slug)

    def system_runs_of(self, dataset: str, provenance: str) -> dict:
        """System (as tables print it) -> its run files (several: an oracle's random tie-break
        draws)."""
        plan, L = self.plan, self.layout
        return {
            str(system): [L.run(dataset, provenance, name) for name in plan.run_names(system)]
            for system in plan.systems
        }

    def system_runs(self, wildcards) -> dict:
        return self.system_runs_of(wildcards.dataset, wildcards.provenance)

    RUNS_PER_PROCESS = 25
    """A job that reads or scores every run (``recorded_runs``, ``scores``) asks a thread (a
    forked process, :mod:`voirdire.parallel`) per this many runs: a big folder of runs gets the
    cores nothing else can use yet; a demo's few runs stay one thread, never waiting for two
    free cores beside a model's job."""

    def runs_threads(self, wildcards) -> int:
        """Threads of a job that reads or scores every run: one per :data:`RUNS_PER_PROCESS`
        runs, 1 to 8 (Snakemake gives no more than ``--cores``)."""
        runs = sum(len(files) for files in self.system_runs_of(wildcards.dataset, "original").values())
        return max(1, min(8, runs // self.RUNS_PER_PROCESS))

    def original_runs(self, wildcards=None) -> dict:
        """Dataset -> system -> its run files of the original collection."""
        return {d: self.system_runs_of(d, "original") for d in self.plan.datasets}

    def position_bias_files(self, wildcards) -> list[str]:
        """Position-bias figures of every PRP ranker, per dataset (a table beside Table 1). PRP
        rankers keep their original orderings in a rewritten collection (only the pointwise
        rankers of `rewriting.rankers` rerank it), so every provenance shows the original
        figures."""
        return [
            self.layout.bias(dataset, "original", ranker.name)
            for dataset in self.plan.datasets
            for ranker in self.plan.rankers
            if ranker.method == "prp"
        ]

    # ------------------------------------------------------------------------- judges
    def pairs_inputs(self, wildcards) -> dict:
        """What the needed pairs are drawn from: the BM25 pool (a dataset with texts) and every
        recorded run's top depth (the oracles and rankers reorder one of these)."""
        plan, L, d = self.plan, self.layout, wildcards.dataset
        inputs = {"qrels": L.human_qrels(d)}
        if not plan.labels_only(d):
            inputs["pool"] = L.pool(d)
        if plan.recorded:
            inputs["recorded"] = [L.run(d, "original", s.slug) for s in plan.recorded]
        return inputs

    def recorded_judges(self, dataset: str) -> list[str]:
        """The dataset's recorded judges, in config order."""
        return [judge.name for judge in self.plan.judges[dataset] if judge.kind == "recorded"]

    def recorded_judge_sets(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """(datasets, recorded judges) for each distinct set of recorded judges: one
        `recorded_judges` rule each. Usually one: every dataset has the same judges (a judge
        whose qrels name only some datasets makes another)."""
        sets: dict[tuple[str, ...], list[str]] = {}
        for dataset in self.plan.datasets:
            if names := tuple(self.recorded_judges(dataset)):
                sets.setdefault(names, []).append(dataset)
        return [(tuple(datasets), names) for names, datasets in sets.items()]

    def recorded_outputs(self, names: Iterable[str]) -> dict[str, str]:
        """The `recorded_judges` rule's outputs (patterns in dataset and provenance): each
        judge's qrels and summary, as ``qrels/<judge>`` and ``summary/<judge>``."""
        L, d, p = self.layout, "{dataset}", "{provenance}"
        names = list(names)
        return named(
            qrels={name: L.qrels(d, p, name) for name in names},
            summary={name: L.judgments(d, p, name, "summary.json") for name in names},
        )

    def recorded_qrels(self, wildcards) -> dict:
        """Recorded judge name -> its label file for the dataset."""
        d = wildcards.dataset
        return {name: str(self.plan.judge(d, name).qrels) for name in self.recorded_judges(d)}

    def recorded_scales(self, wildcards) -> dict:
        """Recorded judge name -> its scale (min, max, binary_threshold)."""
        return {name: self.judge_scale(wildcards.dataset, name) for name in self.recorded_judges(wildcards.dataset)}

    def recorded_invalid_labels(self, wildcards) -> dict:
        """Recorded judge name -> what to do with lines off its scale or conflicting (error, drop)."""
        d = wildcards.dataset
        return {name: self.plan.judge(d, name).invalid_labels for name in self.recorded_judges(d)}

    def judge_scale(self, dataset: str, name: str) -> dict:
        judge = self.plan.judge(dataset, name)
        return {
            "min": judge.scale.low,
            "max": judge.scale.high,
            "binary_threshold": judge.scale.binary_threshold,
        }

    def judge_params(self, wildcards) -> dict:
        return self.judge_scale(wildcards.dataset, wildcards.judge)

    def judges_meta(self, wildcards) -> dict:
        """Judge name -> scale, for every judge of the dataset (human first)."""
        return {judge: self.judge_scale(wildcards.dataset, judge) for judge in self.plan.judge_names(wildcards.dataset)}

    def judge_summaries(self, wildcards) -> dict:
        """Judge name -> summary of each LLM judge (calls, unparsed, cost) and recorded judge
        (labels outside the pool, coverage) of the dataset, for Table 2."""
        d, p = wildcards.dataset, wildcards.provenance
        return {
            judge.name: self.layout.judgments(d, p, judge.name, "summary.json")
            for judge in self.plan.judges[d]
            if judge.kind in ("llm", "recorded")
        }

    def jury_member_qrels(self, wildcards) -> dict:
        """A jury's member name -> its qrels of the dataset and provenance (docs/juries.md)."""
        d, p = wildcards.dataset, wildcards.provenance
        return {name: self.layout.qrels(d, p, name) for name in self.plan.judge(d, wildcards.judge).members}

    def jury_scales(self, wildcards) -> dict:
        """A jury's member name -> its scale (min, max, binary_threshold), and the humans' (``human``)."""
        d = wildcards.dataset
        names = [*self.plan.judge(d, wildcards.judge).members, "human"]
        return {name: self.judge_scale(d, name) for name in names}

    def texts_inputs(self, wildcards) -> dict:
        """The texts of the pool in the job's provenance: the pool's passages, and an assistant's
        rewrites (substituted wherever the passage appears) for rewritten-* provenances."""
        L = self.layout
        inputs = {"passages": [L.passages(wildcards.dataset)]}
        if wildcards.provenance != "original":
            inputs["rewrites"] = L.rewrites(wildcards.dataset, wildcards.provenance)
        return inputs

    def sample_texts_inputs(self, wildcards) -> dict:
        """The texts of the pool and of the sample, in the job's provenance."""
        inputs = self.texts_inputs(wildcards)
        inputs["passages"] = inputs["passages"] + [self.layout.sample_passages(wildcards.dataset)]
        return inputs

    def judge_seeds(self, wildcards) -> dict:
        """Finished stores an LLM judging job copies answers from (same request, same answer):
        a rewritten-* job reads the original job's, a sample job its provenance's pool job's too.
        Name -> the qrels that mark the store finished (inputs), and the stores (params)."""
        L = self.layout
        d, p, j = wildcards.dataset, wildcards.provenance, wildcards.judge
        seeds = {}
        if p != "original":
            seeds[L.store(d, "original", j)] = L.qrels(d, "original", j)
        return seeds

    def sample_judge_seeds(self, wildcards) -> dict:
        L = self.layout
        d, p, j = wildcards.dataset, wildcards.provenance, wildcards.judge
        seeds = {L.store(d, p, j): L.qrels(d, p, j)}
        if p != "original":
            seeds[L.sample_labels(d, "original", j, "sqlite")] = L.sample_labels(d, "original", j)
        return seeds

    # ------------------------------------------------------------------------- evaluation, report
    def judge_qrels(self, wildcards) -> dict:
        """Judge name -> its qrels, for every judge of the dataset."""
        d, p = wildcards.dataset, wildcards.provenance
        return {judge: self.layout.qrels(d, p, judge) for judge in self.plan.judge_names(d)}

    def dataset_scores(self, wildcards) -> list[str]:
        """The dataset's scores table in the job's provenance: every system under every judge
        and human@pool, every measure (none without systems: the label sets are audited alone)."""
        if not self.plan.has_systems:
            return []
        return [self.layout.scores(wildcards.dataset, wildcards.provenance)]

    def all_scores(self, wildcards) -> list[str]:
        """Every dataset's scores table in the job's provenance (none without systems)."""
        if not self.plan.has_systems:
            return []
        return [self.layout.scores(d, wildcards.provenance) for d in self.plan.datasets]

    def original_scores(self, wildcards=None) -> dict:
        """Dataset -> its scores table of the original collection (every judge, every measure)."""
        return {d: self.layout.scores(d, "original") for d in self.plan.datasets}

    def all_datasets(self, pattern: str) -> Callable:
        """An input function: the pattern (with `{dataset}`, maybe `{provenance}`) for every
        dataset, in the job's provenance."""

        def inputs(wildcards):
            return [
                pattern.replace("{dataset}", d).replace("{provenance}", wildcards.provenance)
                for d in self.plan.datasets
            ]

        return inputs

    def rewrite_summaries(self, wildcards) -> dict:
        """Dataset -> the assistant's rewrite summary (a rewritten-* provenance; none for
        original)."""
        p = wildcards.provenance
        if p == "original":
            return {}
        return {d: self.layout.rewrites(d, p, "summary.json") for d in self.plan.datasets}

    # ------------------------------------------------------------------------- audits
    def audit_judges(self, wildcards) -> dict:
        """Dataset -> judge -> scale, kind and family, for every judge of every dataset."""
        return {
            dataset: {
                judge.name: {
                    **self.judge_scale(dataset, judge.name),
                    "kind": judge.kind,
                    "family": judge.family,
                }
                for judge in self.plan.judges[dataset]
            }
            for dataset in self.plan.datasets
        }

    def audit_qrels(self, wildcards) -> dict:
        """Dataset -> judge -> qrels file, for every judge of every dataset."""
        return {
            dataset: {
                judge: self.layout.qrels(dataset, wildcards.provenance, judge)
                for judge in self.plan.judge_names(dataset)
            }
            for dataset in self.plan.datasets
        }

    def audit_drift_sources(self, wildcards) -> dict:
        """Dataset -> judge -> its extra label sets: a recorded judge's reruns, or an LLM judge's
        raw answers (label sets by sample when samples >= 2, else by the provider's model
        version)."""
        sources = {}
        for dataset in self.plan.datasets:
            for judge in self.plan.judges[dataset]:
                if judge.kind == "recorded" and judge.reruns:
                    sources.setdefault(dataset, {})[judge.name] = {"reruns": [str(p) for p in judge.reruns]}
                elif judge.kind == "llm":
                    raw = self.layout.judgments(dataset, wildcards.provenance, judge.name, "parquet")
                    sources.setdefault(dataset, {})[judge.name] = {"raw": raw}
        return sources

    def audit_runs(self, wildcards) -> dict:
        """Dataset -> system -> run files, for re-evaluating drifted labels."""
        return {d: self.system_runs_of(d, wildcards.provenance) for d in self.plan.datasets}

    def audit_inputs(self, wildcards) -> dict:
        """Every file the audits read, name-keyed and declared once (voirdire.jobscript.named): each
        judge's qrels, the needed pairs, topics, the systems' runs, the oracles' base run (none
        without systems), the texts (not of a labels-only dataset) and a rewritten provenance's
        rewrites, and the drift audit's extra label sets."""
        plan, L, p = self.plan, self.layout, wildcards.provenance
        texts = [d for d in plan.datasets if not plan.labels_only(d)]
        base = plan.datasets if plan.has_systems else []
        return named(
            qrels=self.audit_qrels(wildcards),
            pairs={d: L.pairs(d, p) for d in plan.datasets},
            topics={d: L.topics(d) for d in plan.datasets},
            runs=self.audit_runs(wildcards),
            base={d: L.run(d, "original", plan.base.slug) for d in base},
            passages={d: L.passages(d) for d in texts},
            rewrites={} if p == "original" else {d: L.rewrites(d, p) for d in texts},
            drift=self.audit_drift_sources(wildcards),
        )

    # ------------------------------------------------------------------------- assistants
    def assistant_of(self, provenance: str):
        return self.plan.assistant(provenance.removeprefix("rewritten-"))

    def sample_judges(self, dataset: str) -> list[str]:
        """The judges that read the texts, so label the sample in each provenance (Figure 4)."""
        return [j.name for j in self.plan.judges[dataset] if j.kind in ("llm", "embedding", "baseline")]

    def assistant_inputs(self, wildcards) -> dict:
        """Everything the assistants tables of one rewritten provenance read."""
        L, p = self.layout, wildcards.provenance
        files = {}
        for d in self.plan.datasets:
            files[f"sample/{d}"] = L.sample(d)
            files[f"rewrites/{d}"] = L.rewrites(d, p)
            for j in self.sample_judges(d):
                for prov in ("original", p):
                    files[f"labels/{d}/{prov}/{j}"] = L.sample_labels(d, prov, j)
            for prov in ("original", p):
                files[f"scores/{d}/{prov}"] = L.scores(d, prov)
            files[f"pool/{d}"] = L.pool(d)
        return files

    def score_inputs(self, wildcards) -> dict:
        plan, p = self.plan, wildcards.provenance
        return named(
            scores={
                d: {r.name: self.layout.sample_scores(d, p, r.name) for r in plan.rewriting_rankers}
                for d in plan.datasets
            }
        )

    # ------------------------------------------------------------------------- probes
    def probe_judge_inputs(self, wildcards) -> dict:
        """A probe job's optional inputs: the personas (persona probe) and LLM padders' texts."""
        L = self.layout
        inputs = {}
        if "personas" in self.probes:
            inputs["personas"] = L.personas(wildcards.dataset)
        if self.plan.padders:
            inputs["padded"] = [L.padded(wildcards.dataset, p.name) for p in self.plan.padders]
        return inputs

    def probe_templates(self, wildcards=None) -> list[str]:
        """The probes' template files, so that editing one reruns the probe jobs."""
        swap = self.probes.get("swap") or {}
        files = [swap.get("prompt_file", str(PAIRWISE_PROMPT))] if swap or "pad" in self.probes else []
        if swap.get("lists"):
            files.append(swap["lists"].get("prompt_file", str(LISTS_PROMPT)))
        return files

    def probe_answers(self, wildcards=None) -> dict:
        """(dataset, judge) -> the judge's probe answers, for every probed judge of every
        dataset."""
        plan = self.plan
        return {(d, j): self.layout.probe_answers(d, j) for d in plan.datasets for j in plan.probe_judges}

    def probe_answer_files(self, wildcards) -> list[str]:
        return list(self.probe_answers().values())

    def probe_answer_tree(self, wildcards=None) -> dict:
        """Dataset -> probed judge -> its probe answers."""
        plan = self.plan
        return {d: {j: self.layout.probe_answers(d, j) for j in plan.probe_judges} for d in plan.datasets}

    def probe_summary_tree(self, wildcards=None) -> dict:
        """Dataset -> who answered the probes (each probed judge, each LLM padder) -> its
        summary."""
        plan, L = self.plan, self.layout
        return {
            d: {j: L.probe_answers(d, j, "summary.json") for j in plan.probe_judges}
            | {f"padder-{p.name}": L.padded(d, p.name, "summary.json") for p in plan.padders}
            for d in plan.datasets
        }

    def human_qrels_of(self, wildcards=None) -> dict:
        return {d: self.layout.human_qrels(d) for d in self.plan.datasets}

    def variant_labels(self) -> dict:
        """(dataset, group, judge) -> qrels of every judge of every variants group (pool,
        original)."""
        return {
            (d, group, judge): self.layout.qrels(d, "original", judge)
            for group, entry in self.config.get("variants", {}).items()
            for judge in [entry["baseline"], *entry["variants"]]
            for d in self.plan.datasets
        }

    def variant_label_tree(self, wildcards=None) -> dict:
        """Dataset -> variants group -> judge -> its qrels (pool, original)."""
        tree = {}
        for (d, group, judge), path in self.variant_labels().items():
            tree.setdefault(d, {}).setdefault(group, {})[judge] = path
        return tree

    def probe_final_outputs(self) -> list[str]:
        """The table of every configured probe (and of the prompt variants)."""
        names = []
        if self.plan.probe_judges:
            names += [name for name in ("swap", "pad", "injection") if name in self.probes]
            if "personas" in self.probes:
                names.append("persona_sensitivity")
        if self.config.get("variants"):
            names.append("prompt_sensitivity_sensitivity")
        return [self.layout.audit("original", name, "csv") for name in names]

    # ------------------------------------------------------------------------- the gamed system
    def gaming_systems(self, dataset: str) -> dict:
        """Gamed system (as tables print it) -> its run files of the original collection."""
        runs = self.system_runs_of(dataset, "original")
        return {name: runs[name] for name in self.gaming.get("systems", [])}

    def gaming_run_inputs(self, wildcards) -> dict:
        """The gamed systems' runs, name-keyed (the script reads them back with grouped)."""
        return named(runs=self.gaming_systems(wildcards.dataset))

    def gaming_label_tree(self, wildcards=None) -> dict:
        """Dataset -> judge -> its labels of the modified passages."""
        plan = self.plan
        return {d: {j: self.layout.gaming_labels(d, j) for j in plan.gaming_judges} for d in plan.datasets}

    def gaming_qrels_tree(self, wildcards=None) -> dict:
        """Dataset -> judge -> its labels of the pool (original texts)."""
        plan = self.plan
        return {d: {j: self.layout.qrels(d, "original", j) for j in plan.gaming_judges} for d in plan.datasets}

    def gaming_final_outputs(self) -> list[str]:
        return [self.layout.audit("original", "gaming", "csv")] if self.plan.gaming_judges else []

    # ------------------------------------------------------------------------- the verdict
    def verdict_inputs(self, wildcards) -> dict:
        """Every table a verdict question reads (voirdire.verdict.QUESTIONS), of the original
        texts: the paper's tables, the label audits, and the probes that are configured."""
        L = self.layout
        tables = {name: L.table("original", name, "csv") for name in ("table1", "table2", "significance")}
        # the label audits' tables that a question reads (both declared: voirdire.audits.declared)
        asked = {name for question in QUESTIONS.values() for name in question.reads}
        tables |= {name: L.audit("original", name, "csv") for name in audit_tables() if name in asked}
        probes = set(self.probes) if self.plan.probe_judges else set()
        tables |= {name: L.audit("original", name, "csv") for name in ("swap", "pad", "injection") if name in probes}
        if "personas" in probes:
            tables["persona_sensitivity"] = L.audit("original", "persona_sensitivity", "csv")
        for path in self.gaming_final_outputs():  # none, or the one table
            tables["gaming"] = path
        if self.plan.has_systems:  # the landing page shows Figure 3 under the verdict
            tables["figure3"] = L.figure("original", "figure3", "png")
        return tables

    def unavailable(self, dataset: str) -> dict:
        """What the verdict's questions may need and this dataset lacks -> the reason
        (voirdire.verdict): systems (no systems: listed: the label sets are audited alone),
        passage texts (a labels-only dataset)."""
        missing = {}
        if not self.plan.has_systems:
            missing["runs"] = NO_SYSTEMS
        if self.plan.labels_only(dataset):
            missing["texts"] = "no passage texts (a labels-only dataset)"
        return missing
