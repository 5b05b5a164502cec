"""The input functions of judges (workflow/rules/judges.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from collections.abc import Iterable

from ..jobscript import named


class JudgeInputs:
    def pairs_inputs(self, wildcards) -> dict:
        """What the needed pairs are drawn from: the BM25 pool (a dataset with texts) and every
        recorded run's top depth (the oracles and rankers reorder one of these)."""
        plan, L, d = self.plan, self.layout, wildcards.dataset
        inputs = {"qrels": L.human_qrels(d)}
        if not plan.labels_only(d) and not plan.fetched_texts(d):
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
