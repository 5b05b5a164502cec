"""The input functions of the assistants experiment (workflow/rules/assistants.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from ..jobscript import named


class AssistantInputs:
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
