"""The input functions of the label audits (workflow/rules/audits.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from ..jobscript import named


class AuditInputs:
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
