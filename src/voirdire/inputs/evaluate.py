"""The input functions of evaluation and the report (workflow/rules/evaluate.smk, report.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from collections.abc import Callable


class EvaluateInputs:
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
